"""biject_to(constraint) and transform_to(constraint): a transform from unconstrained real
numbers onto a constraint's set, for optimizing a constrained parameter through an
unconstrained one (torch.distributions.constraint_registry).

    scale = transform_to(constraints.positive)(raw)   # raw any real tensor, scale > 0

biject_to gives a bijection (so log_abs_det_jacobian is defined: what a sampler over the
unconstrained space needs); transform_to may give a map that is not injective but is cheaper or
better conditioned (softmax onto the simplex)."""
from . import constraints
from . import transforms as T


class ConstraintRegistry:
    """Factories (constraint -> Transform), looked up by the constraint's type."""

    def __init__(self, name):
        self._name, self._registry = name, {}

    def register(self, constraint, factory=None):
        """Registers factory(constraint) for constraints of constraint's type (an instance or a
        type); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        key = constraint if isinstance(constraint, type) else type(constraint)
        if not (isinstance(key, type) and issubclass(key, constraints.Constraint)):
            raise TypeError(f"{self._name}.register: constraint must be a Constraint or its type, "
                            f"got {constraint!r}")
        self._registry[key] = factory
        return factory

    def __call__(self, constraint):
        for key in type(constraint).__mro__:
            if key in self._registry:
                return self._registry[key](constraint)
        raise NotImplementedError(f"{self._name}: no transform is registered for {constraint!r}")


biject_to = ConstraintRegistry("biject_to")
transform_to = ConstraintRegistry("transform_to")


@biject_to.register(constraints._Real)
@transform_to.register(constraints._Real)
def _transform_to_real(constraint):
    return T.identity_transform


@biject_to.register(constraints._IndependentReal)
@transform_to.register(constraints._IndependentReal)
def _transform_to_real_vector(constraint):
    return T.IndependentTransform(T.identity_transform, 1)


@biject_to.register(constraints._IndependentConstraint)
def _biject_to_independent(constraint):
    return T.IndependentTransform(biject_to(constraint.base_constraint),
                                  constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints._IndependentConstraint)
def _transform_to_independent(constraint):
    return T.IndependentTransform(transform_to(constraint.base_constraint),
                                  constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints._GreaterThan)
@biject_to.register(constraints._GreaterThanEq)
@transform_to.register(constraints._GreaterThan)
@transform_to.register(constraints._GreaterThanEq)
def _transform_to_greater_than(constraint):
    if constraint is constraints.positive or constraint is constraints.nonnegative:
        return T.ExpTransform()
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints._LessThan)
@transform_to.register(constraints._LessThan)
def _transform_to_less_than(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints._Interval)
@biject_to.register(constraints._HalfOpenInterval)
@transform_to.register(constraints._Interval)
@transform_to.register(constraints._HalfOpenInterval)
def _transform_to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)) and lower == 0 and upper == 1:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints._Simplex)
def _biject_to_simplex(constraint):
    return T.StickBreakingTransform()


@transform_to.register(constraints._Simplex)
def _transform_to_simplex(constraint):
    return T.SoftmaxTransform()


@transform_to.register(constraints._LowerCholesky)
def _transform_to_lower_cholesky(constraint):
    return T.LowerCholeskyTransform()


@biject_to.register(constraints._IntegerGreaterThan)
@biject_to.register(constraints._IntegerInterval)
@transform_to.register(constraints._IntegerGreaterThan)
@transform_to.register(constraints._IntegerInterval)
def _no_transform_to_integers(constraint):
    raise NotImplementedError(f"biject_to/transform_to: integers ({constraint!r}) are not the image "
                              f"of a continuous map of the real numbers")
