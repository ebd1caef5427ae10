"""Fusion on the CPU: Numba code generated for groups the compiler's fusion pass forms.

Importing this package is cheap: Numba is imported only when the first kernel is generated.
"""
