"""The probs/logits pair of a binary family (Geometric, NegativeBinomial, ContinuousBernoulli,
the relaxed Bernoullis): either given, the other derived when first asked for."""
from .categorical import _probs_or_logits
from .distribution import clamp_probs


class ProbsOrLogits:
    """Stores the parameter given (probs or logits) and derives the other lazily."""

    def _set_probs_or_logits(self, owner, probs, logits):
        param = _probs_or_logits(owner, probs, logits)
        self.__dict__["probs" if probs is not None else "logits"] = param
        self._param, self._param_name = param, "probs" if probs is not None else "logits"
        return param

    def _given_parameters(self):
        return {self._param_name: self._param}

    @property
    def logits(self):
        if "logits" not in self.__dict__:
            p = clamp_probs(self.probs)
            self.__dict__["logits"] = p.log() - (-p).log1p()
        return self.__dict__["logits"]

    @property
    def probs(self):
        if "probs" not in self.__dict__:
            self.__dict__["probs"] = self.logits.sigmoid()
        return self.__dict__["probs"]

    @property
    def param_shape(self):
        return tuple(self._param.shape)
