"""scikit-learn estimators (scikit-learn is an optional dependency, imported
lazily by this module only)."""

__all__ = ["SketchedNystroem", "SinglePassSVD"]

# ---- SketchedNystroem --------------------------------------------------------

# ---- SinglePassSVD -----------------------------------------------------------
