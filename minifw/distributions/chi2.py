"""The chi-squared distribution with df degrees of freedom: Gamma(df / 2, 1 / 2)."""
from . import constraints
from .distribution import broadcast_all
from .gamma import Gamma


class Chi2(Gamma):
    """The sum of df squared standard normals (df need not be an integer)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        df, = broadcast_all("Chi2", df=df)
        super().__init__(0.5 * df, 0.5 * df.new_ones(df.shape), validate_args=validate_args)

    def _given_parameters(self):
        return {"df": self.df}

    @property
    def df(self):
        return self.concentration * 2
