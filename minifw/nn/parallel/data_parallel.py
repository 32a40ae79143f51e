"""DataParallel (as torch.nn.DataParallel), on one device.

PyTorch's DataParallel splits each batch across several GPUs of one process, runs a replica
of the module on each and gathers the outputs. minifw runs a process on one device, so its
DataParallel is the wrapper without the splitting: it holds the module (`.module`, so that
state_dict keys gain the "module." prefix a PyTorch checkpoint has) and forwards every call to
it. Scripts written for DataParallel run unchanged; for several devices, use
DistributedDataParallel, one process per device.
"""
from ... import devices
from ..modules.module import Module


class DataParallel(Module):
    """Wraps module and forwards to it, on the module's one device (see the module docstring)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a minifw.nn.Module, got "
                            f"{type(module).__name__}")
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"DataParallel: dim must be an int, got {type(dim).__name__}")
        if device_ids is not None and len(list(device_ids)) > 1:
            raise ValueError(f"DataParallel: minifw runs a process on one device, got device_ids="
                             f"{list(device_ids)!r}; use DistributedDataParallel with one process "
                             f"per device")
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        if output_device is not None:
            self.output_device = devices.get(output_device, "DataParallel")

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
