"""The model layer: the neutral model (:mod:`.mechanism`), what is wrong with one
(:mod:`.problems`, :mod:`.validation`), its file (:mod:`.xmlio`), time functions
(:mod:`.timefunction`; their trees and derivatives in :mod:`.expression`) and mass properties
(:mod:`.massprops`).

The names of the model's API are importable from here (``from MultibodyWB.solver.model import
MultibodySystem, ModelError, HINGE_TYPES``); the element tables come from :mod:`..elements`.
"""

from ..elements.forces import FORCE_TYPES, ForceType
from ..elements.hinges import (COORDINATE_KIND, COORDINATE_UNIT, DAMPING_UNIT, HINGE_TYPES,
                               LOAD_UNIT, STIFFNESS_UNIT, HingeType)
from .mechanism import (CONTACT_PAIRS, CONTACT_SHAPES, COUPLER_TYPES, FORMAT_VERSION, Contact,
                        ContactShape, CoordinateRef, Coupler, Driver, Force, Frame, Ground, Hinge, Marker, MarkerRef, Motor,
                        MultibodySystem, RigidBody, Simulation)
from .problems import ModelError, Problem
from .settings import INTEGRATORS, METHODS

__all__ = ["CONTACT_PAIRS", "CONTACT_SHAPES", "COUPLER_TYPES", "Contact", "ContactShape",
           "CoordinateRef", "Coupler", "COORDINATE_KIND", "COORDINATE_UNIT", "DAMPING_UNIT", "Driver", "FORCE_TYPES",
           "FORMAT_VERSION", "Force", "ForceType", "Frame", "Ground", "HINGE_TYPES", "Hinge",
           "HingeType", "INTEGRATORS", "LOAD_UNIT", "METHODS", "Marker", "MarkerRef", "ModelError",
           "Motor", "MultibodySystem", "Problem", "RigidBody", "STIFFNESS_UNIT", "Simulation"]
