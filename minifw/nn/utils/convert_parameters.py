"""parameters_to_vector and vector_to_parameters, as torch.nn.utils."""
from ...tensor import Tensor, cat


def _tensors(fn, parameters):
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{fn}: parameters must be a Tensor or an iterable of Tensors; element {i} "
                            f"is a {type(p).__name__}")
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise ValueError(f"{fn}: every parameter must be on one device, got {sorted(map(str, devices))}")
    return params


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in _tensors("parameters_to_vector", parameters)])


def vector_to_parameters(vec, parameters):
    """Make each parameter, in order, a view of the next slice of the 1-D vec, as PyTorch's
    `param.data = vec[i:j].view_as(param).data`: afterwards the parameters and vec share
    memory (a change to either shows in the other), each parameter takes vec's dtype and
    device, stays a leaf with its requires_grad, and no gradient flows back to vec. vec may be
    longer than the parameters' total (the rest is not used), not shorter."""
    fn = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"{fn}: vec must be a Tensor, got {type(vec).__name__}")
    params = _tensors(fn, parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() < total:
        raise ValueError(f"{fn}: vec must be 1-D with at least {total} elements (the parameters' "
                         f"total), got shape {tuple(vec.shape)}")
    at = 0
    for p in params:
        n = p.numel()
        # a reshape of a slice of a 1-D array is always a view: never a copy
        p.data = Tensor._make(vec._data[at:at + n].reshape(p.shape))
        at += n
