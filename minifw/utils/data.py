"""torch.utils.data's name for minifw.data: the same classes and functions."""
from ..data import *  # noqa: F401,F403
from ..data import __all__  # noqa: F401
