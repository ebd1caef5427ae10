"""Graph passes of compiled mode: each rewrites a traced Graph in place (see ir.py)."""
