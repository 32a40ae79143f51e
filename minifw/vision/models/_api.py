"""What every model builder shares: the registry behind get_model and list_models, and the
refusal of pretrained weights (minifw downloads nothing; a checkpoint file torchvision's model
saved loads with model.load_state_dict(minifw.load(path)))."""
import fnmatch
import os
import sys
import warnings

_BUILDERS = {}  # model name -> builder, in the order the modules register them


def register_model(name=None):
    """A decorator that makes a builder reachable by get_model under `name` (default: the
    function's name)."""
    def register(builder):
        key = builder.__name__ if name is None else name
        if key in _BUILDERS:
            raise ValueError(f"register_model: a model named {key!r} is already registered")
        _BUILDERS[key] = builder
        return builder
    return register


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered models. `module`: only those whose builders live in
    that package (minifw.vision.models); `include` and `exclude`: a glob pattern or a list of
    them ("resnet*"), a name is kept if it matches any `include` and no `exclude`."""
    names = {name for name, builder in _BUILDERS.items()
             if module is None or builder.__module__.rsplit(".", 1)[0] == module.__name__}
    kept = set()
    for pattern in _patterns("include", include) or ["*"]:
        kept |= set(fnmatch.filter(names, pattern))
    for pattern in _patterns("exclude", exclude):
        kept -= set(fnmatch.filter(names, pattern))
    return sorted(kept)


def _patterns(argument, value):
    if value is None:
        return []
    patterns = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else [None]
    if not all(isinstance(pattern, str) for pattern in patterns):
        raise TypeError(f"list_models: {argument} must be a glob pattern or a list of them, got "
                        f"{type(value).__name__} {value!r}")
    return patterns


def get_model_builder(name):
    """The function that builds the model called `name` (case does not matter)."""
    if not isinstance(name, str):
        raise TypeError(f"get_model_builder: name must be a str, got {type(name).__name__} {name!r}")
    builder = _BUILDERS.get(name.lower())
    if builder is None:
        raise ValueError(f"get_model: unknown model {name!r}; name must be one of list_models(): "
                         f"{', '.join(sorted(_BUILDERS))}")
    return builder


def get_model(name, **config):
    """The model called `name`, built by its builder with the keyword arguments `config`:
    get_model("resnet18", num_classes=10) is resnet18(num_classes=10)."""
    return get_model_builder(name)(**config)


def _load_instead(builder):
    return (f"minifw downloads no weights: build {builder}(weights=None) and load a checkpoint "
            f"file torchvision's model saved (torch.save(model.state_dict(), path)) with "
            f"model.load_state_dict(minifw.load(path))")


def _check_no_weights(builder, weights, kwargs):
    """Takes `pretrained` out of a builder's `kwargs` and refuses any pretrained weights.

    weights=None and the deprecated pretrained=False (which warns, as torchvision's does) build
    a freshly initialized model; any other `weights` (an enum member, "DEFAULT", a name) or a
    true `pretrained` is a ValueError that says how to load a checkpoint file instead."""
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        if pretrained:
            raise ValueError(f"{builder}: pretrained must be False, got {pretrained!r}; "
                             f"{_load_instead(builder)}")
        warnings.warn(f"{builder}: the argument 'pretrained' is deprecated (torchvision 0.13 "
                      f"replaced it with 'weights'); pass weights=None instead", UserWarning,
                      stacklevel=_caller_stacklevel())
    if weights is not None:
        raise ValueError(f"{builder}: weights must be None, got {weights!r}; {_load_instead(builder)}")


def _caller_stacklevel():
    """warnings.warn's stacklevel, in the function that calls this, of the first caller outside
    this package: the warning names the user's line, through get_model or a builder alike."""
    here, frame, level = os.path.dirname(__file__), sys._getframe(1), 1
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == here:
        frame, level = frame.f_back, level + 1
    return level


def _set_fixed(builder, kwargs, name, value):
    """A builder's own value for one of the model's arguments (resnext50_32x4d's groups=32):
    passing the same value is allowed, another is a ValueError."""
    if name in kwargs and kwargs[name] != value:
        raise ValueError(f"{builder}: {name} must be {value!r} (the model's own), got {kwargs[name]!r}")
    kwargs[name] = value
