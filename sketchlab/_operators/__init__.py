"""Sketching operators: random s x d matrices that are never stored densely.

Every operator is defined by (kind, sketch_size, input_dim, seed, parameters)
and is immutable.  Its random numbers come from the counter-based hash of
``sketchlab._hash`` so that any block of its columns can be regenerated on its
own: ``S.apply(A_block, axis=0, offset=j0)`` equals applying columns
``[j0, j0 + b)`` of the whole S, on any thread count, bit for bit for the
hashing and sampling kinds.

The operators own every way of applying them (the algorithms call nothing
else): :meth:`SketchOperator.apply` (left or right, whole or block, into a new
array, into a given one, or added to a given one), :meth:`SketchOperator.apply_many`
(one operator, several arrays, its random numbers generated once) and
:func:`sketch_both` (two-sided, one pass over the nonzeros).

All kinds satisfy E[S^T S] = I.

The package, one module per idea (a module imports only those above it):

- ``_base``: :class:`SketchOperator` (validation of every call, the
  capability attributes the registry reads), the transpose view, views of
  a validated sparse matrix;
- (the loops they run are ``sketchlab._engine.operators``: generation of
  hash codes and dense columns, the one-sided and two-sided table loops and
  their chunk rules, the fused dense-over-hashing pass; a second backend is
  a sibling of the engine package);
- ``_tables``: the table kinds' common machinery (tables, every input form
  and output layout);
- ``_sparse``: CountSketch, OSNAP, the samplers, the index selection;
- ``_dense``: Gaussian and SRHT, applied as blocks of columns times A;
- ``_compose``: composition, and the two-sided sketch :func:`sketch_both`.
"""

from ._base import SketchOperator
from ._compose import ComposedSketch, OSNAPGaussian, compose, sketch_both
from ._dense import SRHT, GaussianSketch
from ._sparse import OSNAP, CountSketch, IndexSelection, LeverageScoreSampler, UniformSampler

__all__ = [
    "SketchOperator",
    "CountSketch",
    "OSNAP",
    "GaussianSketch",
    "SRHT",
    "UniformSampler",
    "LeverageScoreSampler",
    "ComposedSketch",
    "OSNAPGaussian",
    "IndexSelection",
    "compose",
    "sketch_both",
]
