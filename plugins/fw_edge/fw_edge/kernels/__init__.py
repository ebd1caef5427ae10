"""fw-edge's own kernels, one module per op family, each with a ``KERNELS`` list of
:class:`fw_edge.kernel_api.Kernel` records (``fw_edge.registry.FAMILIES`` says which module
runs which op, so a program imports only the modules its ops need). Helper modules
(``erf``, ``windows``) hold code two families share."""
