"""Containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict. Their
contents are registered as the parent's would be, so parameters(), state_dict(), to() and
friends see them, under PyTorch's names: "0", "1", ... for the lists, the keys for the dicts
("blocks.0.weight", "heads.cls.bias", "scales.alpha")."""
import collections
import collections.abc
import numbers
import operator

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module


class Sequential(Module):
    """Modules applied one after another: Sequential(a, b, c)(x) == c(b(a(x))).
    Also Sequential(OrderedDict([("name", module), ...]))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, index):
        modules = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(collections.OrderedDict(modules[index]))
        return modules[_list_index("Sequential", index, len(modules))][1]

    def __setitem__(self, index, module):
        name = list(self._modules)[_list_index("Sequential", index, len(self))]
        self.add_module(name, module)

    def __delitem__(self, index):
        """Deletes a module (or a slice of them); the rest are numbered 0, 1, ... again, as
        PyTorch's (named ones too)."""
        names = list(self._modules)
        if isinstance(index, slice):
            doomed = names[index]
        else:
            doomed = [names[_list_index("Sequential", index, len(names))]]
        for name in doomed:
            del self._modules[name]
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Puts module at index (-len <= index <= len); those from there on move up one."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.insert: module must be a Module, got "
                            f"{type(module).__name__}")
        n = len(self)
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"Sequential.insert: index must be an int, got {type(index).__name__}")
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for {n} modules")
        modules = list(self._modules.values())
        modules.insert(index + n if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def pop(self, index):
        module = self[index]
        del self[index]
        return module

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential + : the other operand must be a Sequential, got "
                             f"{type(other).__name__}")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"Sequential += : the other operand must be a Sequential, got "
                             f"{type(other).__name__}")
        return self.extend(list(other))

    def __mul__(self, other):
        return Sequential(*(list(self) * _repeats("Sequential *", other)))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        return self.extend(list(self) * (_repeats("Sequential *=", other) - 1))


def _renumber(container):
    """Names the container's modules 0, 1, ... in their order (after a deletion)."""
    modules = list(container._modules.values())
    container._modules.clear()
    for i, m in enumerate(modules):
        container._modules[str(i)] = m


def _repeats(op, n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{op}: the factor must be an int, got {type(n).__name__}")
    if n <= 0:
        raise ValueError(f"{op}: the factor must be positive, got {n}")
    return int(n)


def _list_index(cls, index, n):
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{cls} indices must be ints or slices, got {type(index).__name__}")
    if not -n <= index < n:
        raise IndexError(f"{cls}: index {index} is out of range for {n} modules")
    return index % n


class ModuleList(Module):
    """A list of modules whose parameters the parent module sees."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(modules[index])
        return modules[_list_index("ModuleList", index, len(modules))]

    def __setitem__(self, index, module):
        index = _list_index("ModuleList", index, len(self))
        self.add_module(str(index), module)

    def __delitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            del modules[index]
        else:
            del modules[_list_index("ModuleList", index, len(modules))]
        self._modules.clear()
        self.extend(modules)

    def pop(self, index):
        module = self[index]
        del self[index]
        return module

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def __iadd__(self, modules):
        return self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self.extend(modules)

    def __repr__(self):
        """As PyTorch's: a run of consecutive modules with the same repr is one line,
        "(0-5): 6 x Block(...)"."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        runs = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for first, last, r in runs:
            r = r.replace("\n", "\n  ")
            lines.append(f"({first}): {r}" if first == last else
                         f"({first}-{last}): {last - first + 1} x {r}")
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args):
        raise NotImplementedError("ModuleList has no forward(); iterate over it in your own forward")


class ModuleDict(Module):
    """An ordered dict of modules (string keys) whose parameters the parent module sees:
    ModuleDict({"conv": nn.Conv2d(1, 8, 3), "pool": nn.MaxPool2d(2)}), or from (key, module)
    pairs. It has no forward(): index it in your own."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) the modules of a mapping or of an iterable of (key, module) pairs,
        in their order."""
        _update(self, "ModuleDict", modules, sort_plain_dicts=False)


def _update(container, cls, items, *, sort_plain_dicts):
    if not isinstance(items, collections.abc.Iterable):
        raise TypeError(f"{cls}.update should be called with an iterable of key/value pairs, but "
                        f"got {type(items).__name__}")
    if isinstance(items, collections.abc.Mapping) or isinstance(items, (ModuleDict, ParameterDict)):
        pairs = list(items.items())
        # PyTorch's ParameterDict sorts the keys of a mapping that is not ordered by design
        if sort_plain_dicts and not isinstance(items, (collections.OrderedDict, ParameterDict)):
            pairs.sort()
    else:
        pairs = []
        for j, pair in enumerate(items):
            if not isinstance(pair, collections.abc.Iterable):
                raise TypeError(f"{cls} update sequence element #{j} should be Iterable; is "
                                f"{type(pair).__name__}")
            pair = list(pair)
            if len(pair) != 2:
                raise ValueError(f"{cls} update sequence element #{j} has length {len(pair)}; 2 "
                                 f"is required")
            pairs.append(pair)
    for key, value in pairs:
        container[key] = value


def _describe(value, type_name):
    """A ParameterList / ParameterDict entry as PyTorch prints it."""
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    size = "x".join(str(n) for n in value.shape)
    device = f" ({value.device})" if value.device.type != "cpu" else ""
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"{kind} containing: [{type_name(value)} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters that the parent module sees (as "0", "1", ... in state_dict): a
    Tensor added to it becomes a Parameter; other objects are kept as they are."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _index(self, idx):
        if isinstance(idx, (bool,)) or not isinstance(idx, numbers.Integral):
            raise TypeError(f"ParameterList indices must be ints or slices, got "
                            f"{type(idx).__name__}")
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"ParameterList: index {idx} is out of range for {len(self)} "
                             f"parameters")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._index(idx))

    def __setitem__(self, idx, param):
        name = self._index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, name, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values):
        if not isinstance(values, collections.abc.Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe(p, lambda t: f'minifw.{t.dtype}')}"
                         for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (string keys) that the parent module sees (by key in
    state_dict): a Tensor stored in it becomes a Parameter; other objects are kept as they
    are. update() with a plain dict adds its keys sorted, as PyTorch's."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key(key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}')")
        return key

    def __getitem__(self, key):
        key = self._key(key)
        if key not in self._keys:
            raise AttributeError(f"'ParameterDict' object has no attribute '{key}' (no such key; "
                                 f"its keys are {list(self._keys)})")
        return getattr(self, key)

    def __setitem__(self, key, value):
        key = self._key(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            setattr(self, key, value)
        self._keys[key] = None

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(collections.OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the last inserted (key, parameter)."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Add (or replace) the entries of a mapping or of an iterable of (key, value) pairs."""
        _update(self, "ParameterDict", parameters, sort_plain_dicts=True)

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe(p, lambda t: t.type())}" for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self
