"""Private Numba kernels: raw arrays and scalars in, a preallocated ``out`` written.

No validation and no allocation of results happen here; the public layer
(``sketchlab.operators`` and the algorithms) checks inputs and allocates.
"""
