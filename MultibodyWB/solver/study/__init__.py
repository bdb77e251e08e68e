"""Design studies (sweeps and optimisation of a model's parameters, on Dask): see :mod:`.study`.

The layer above ``run``: a study runs :func:`~..run.simulate.simulate` for every variant.
"""

from .objectives import Constraint, Expression, ExpressionError, parse_constraint
from .parameters import Parameter, StudyError, parse_parameter, target
from .study import METHODS, OPTIMISERS, SWEEPS, Study, StudyTable, check_study, run_study
from .variant import VariantResult

__all__ = ["Constraint", "Expression", "ExpressionError", "parse_constraint", "Parameter",
           "StudyError", "parse_parameter", "target", "METHODS", "OPTIMISERS", "SWEEPS",
           "Study", "StudyTable", "check_study", "run_study", "VariantResult"]
