"""Containers: Sequential and ModuleList."""
import collections
import numbers

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
        del self._modules[list(self._modules)[_list_index("Sequential", index, len(self))]]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


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
        del modules[_list_index("ModuleList", index, len(modules))]
        self._modules.clear()
        self.extend(modules)

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

    def forward(self, *args):
        raise NotImplementedError("ModuleList has no forward(); iterate over it in your own forward")
