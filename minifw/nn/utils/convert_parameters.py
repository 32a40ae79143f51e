"""parameters_to_vector and vector_to_parameters, as torch.nn.utils."""
from ...autograd import no_grad
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
    """Copy consecutive slices of the 1-D vec into the parameters' data, in order."""
    fn = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"{fn}: vec must be a Tensor, got {type(vec).__name__}")
    params = _tensors(fn, parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"{fn}: vec must be 1-D with {total} elements (the parameters' total), got "
                         f"shape {tuple(vec.shape)}")
    at = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[at:at + n].reshape(p.shape))
            at += n
