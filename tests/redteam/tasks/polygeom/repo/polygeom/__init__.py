"""Exact 2-D geometry over ints and fractions.Fraction: orientation, polygon area, point location,
segment intersection and convex hulls, without floating point anywhere."""

from polygeom.hull import convex_hull
from polygeom.points import GeometryError, as_point, cross, orient
from polygeom.polygon import area, contains, locate, orientation, signed_area
from polygeom.segments import on_segment, segment_intersection

__all__ = ["GeometryError", "area", "as_point", "contains", "convex_hull", "cross", "locate", "on_segment",
           "orient", "orientation", "segment_intersection", "signed_area"]
