"""Nested containers of Tensors ("pytrees", as torch.utils._pytree): tuples, lists, dicts and
namedtuples are containers, everything else a leaf. flatten gives the leaves in order and a
spec; unflatten puts new leaves back into the same shape."""


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


class TreeSpec:
    """The shape of a tree: the container type, its keys (dict) and the children's specs;
    a leaf's spec has kind None."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context=None, children=()):
        self.kind, self.context, self.children = kind, context, tuple(children)

    @property
    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.context == other.context and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.context, self.children))

    def __repr__(self):
        if self.kind is None:
            return "*"
        name = self.kind.__name__
        return f"{name}({', '.join(repr(c) for c in self.children)})"


LEAF = TreeSpec(None)


def flatten(tree):
    """(list of leaves, TreeSpec)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if _is_namedtuple(tree) or type(tree) in (tuple, list):
        return TreeSpec(type(tree), None, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec(dict, keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return LEAF


def unflatten(leaves, spec):
    leaves = iter(leaves)
    return _unflatten(leaves, spec)


def _unflatten(leaves, spec):
    if spec.kind is None:
        return next(leaves)
    values = [_unflatten(leaves, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, values))
    if spec.kind in (tuple, list):
        return spec.kind(values)
    return spec.kind(*values)  # a namedtuple


def broadcast_prefix(prefix, tree, fn, name):
    """The leaves of `prefix` (a tree whose leaves stand for whole subtrees of `tree`),
    repeated so there is one per leaf of `tree`; ValueError where the structures differ."""
    out = []
    if not _broadcast(prefix, tree, out):
        raise ValueError(f"{fn}: {name} is not compatible with the structure of the inputs: "
                         f"{name} has structure {flatten(prefix)[1]!r} but the inputs have "
                         f"structure {flatten(tree)[1]!r}")
    return out


def _broadcast(prefix, tree, out):
    if _is_namedtuple(prefix) or type(prefix) in (tuple, list, dict):
        if isinstance(prefix, dict):
            if not isinstance(tree, dict) or set(prefix) != set(tree):
                return False
            return all(_broadcast(prefix[k], tree[k], out) for k in tree)
        if not (_is_namedtuple(tree) or type(tree) in (tuple, list)) or len(prefix) != len(tree):
            return False
        return all(_broadcast(p, t, out) for p, t in zip(prefix, tree))
    out.extend([prefix] * len(flatten(tree)[0]))
    return True
