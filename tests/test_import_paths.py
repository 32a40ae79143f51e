"""The module paths PyTorch scripts import names from work with `torch` renamed to `minifw`, and
give the very objects minifw's main namespaces hold (one class, never a copy)."""
import importlib
import os
import subprocess
import sys

import pytest

import minifw

# (module path after `torch`/`minifw`, the names imported from it, where minifw's own object lives)
PATHS = [
    ("utils.data.distributed", ["DistributedSampler"], "data"),
    ("utils.data.sampler", ["Sampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"], "data"),
    ("utils.data.dataloader", ["DataLoader", "default_collate", "get_worker_info"], "data"),
    ("utils.data.dataset", ["Dataset", "TensorDataset", "Subset", "random_split", "ConcatDataset"], "data"),
    ("utils.data._utils.collate", ["default_collate", "default_convert"], "data"),
    ("autograd.function", ["Function", "FunctionCtx", "once_differentiable"], "autograd"),
    ("autograd.grad_mode", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"], "autograd"),
    ("autograd.variable", ["Variable"], "autograd"),
    ("autograd", ["Variable"], "autograd"),
    ("nn.modules.activation", ["MultiheadAttention", "ReLU"], "nn"),
    ("cuda.amp", ["autocast", "GradScaler", "custom_fwd", "custom_bwd"], None),
]


@pytest.mark.parametrize("path,names,home", PATHS, ids=[p for p, _, _ in PATHS])
def test_the_module_paths_of_pytorch_scripts_import(path, names, home):
    module = importlib.import_module("minifw." + path)
    for name in names:
        obj = getattr(module, name)
        if home is not None:
            assert obj is getattr(importlib.import_module("minifw." + home), name), (path, name)


def test_cuda_amp_is_one_module_as_attribute_and_import():
    import types

    import minifw.cuda.amp
    assert isinstance(minifw.cuda.amp, types.ModuleType)
    assert importlib.import_module("minifw.cuda.amp") is minifw.cuda.amp


def test_the_data_modules_are_one_object_under_both_names(tmp_path):
    import minifw.data
    import minifw.data.sampler
    import minifw.utils.data
    import minifw.utils.data.sampler
    assert minifw.utils.data is minifw.data and minifw.utils.data.sampler is minifw.data.sampler
    assert minifw.utils.data.transforms is minifw.data.transforms
    # in a fresh interpreter, importing through the torch-style name first gives the same objects
    code = ("from minifw.utils.data.sampler import RandomSampler as a; from minifw.data.sampler import "
            "RandomSampler as b; import minifw.utils.data.distributed as d, minifw.data.distributed as e; "
            "print(a is b, d is e)")
    # the minifw under test (the installed one, or the source tree of a developer build), imported
    # from outside the tree
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=root))
    assert out.stdout.split() == ["True", "True"]


def test_the_same_paths_exist_in_pytorch():
    torch = pytest.importorskip("torch")
    for path, names, _ in PATHS:
        module = importlib.import_module("torch." + path)
        for name in names:
            assert hasattr(module, name), (path, name)


def test_variable_is_a_new_leaf_on_the_tensors_data():
    from minifw.autograd import Variable
    t = minifw.ones(2)
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and v.is_leaf and not t.requires_grad
    v.data[0] = 5.0  # one storage
    assert t[0].item() == 5.0
    a = minifw.ones(2, requires_grad=True)
    w = Variable(a * 2)
    assert w.grad_fn is None and not w.requires_grad and w.is_leaf
    assert isinstance(t, Variable) and not isinstance(t.numpy(), Variable)
    assert Variable().shape == (0,)
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(t, volatile=True)
    with pytest.raises(TypeError, match="Variable: data must be a Tensor, got int"):
        Variable(3)
    with pytest.raises(TypeError, match="Variable: requires_grad must be a bool, got str"):
        Variable(t, requires_grad="yes")
    (Variable(t, requires_grad=True) * 3).sum().backward()  # usable as a leaf


def test_variable_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch.autograd import Variable as TVariable

    from minifw.autograd import Variable
    for requires_grad in (False, True):
        tv = TVariable(torch.ones(3), requires_grad=requires_grad)
        mv = Variable(minifw.ones(3), requires_grad=requires_grad)
        assert (tv.requires_grad, tv.is_leaf, tv.shape) == (mv.requires_grad, mv.is_leaf, tuple(mv.shape))
