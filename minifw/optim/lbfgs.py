"""L-BFGS (Liu & Nocedal, 1989), with an optional strong-Wolfe line search (Nocedal & Wright,
Numerical Optimization, algorithms 3.5 and 3.6), as in PyTorch (after Schmidt's minFunc)."""
import numbers

import numpy as np

from .. import devices
from ..autograd import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, _check_hyper, _show


class LBFGS(Optimizer):
    """PyTorch's LBFGS: all parameters as one flat vector x, with gradient g. step(closure)
    runs up to max_iter iterations of

        d = -H g        (H: the inverse Hessian estimate from the last history_size pairs
                         s = x_k+1 - x_k, y = g_k+1 - g_k with y.s > 1e-10, by the two-loop
                         recursion, scaled by y.s / y.y of the newest pair)
        t = lr          (the first iteration ever: min(1, 1 / sum|g|) * lr)
        x = x + t * d   (line_search_fn="strong_wolfe": t from a line search along d)

    stopping when max|g| <= tolerance_grad, max|t d| or the change of the loss is below
    tolerance_change, g.d > -tolerance_change (d climbs), or the closure has been called
    max_eval times. closure() re-evaluates the model (zero_grad, forward, backward) and returns
    the loss; step returns its first value. One parameter group only.
    """

    _HYPERS = (("lr", 0.0, None, False), ("tolerance_grad", 0.0, None, False),
               ("tolerance_change", 0.0, None, False))
    _COUNTS = ("max_iter", "max_eval", "history_size")

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        cls = "LBFGS"
        _check_hyper(cls, "lr", lr)
        _check_count(cls, "max_iter", max_iter)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        self._params = self.param_groups[0]["params"]

    def _check_hypers(self, values, where=""):
        super()._check_hypers(values, where)
        cls = type(self).__name__ + where
        for name in self._COUNTS:
            if name in values:
                _check_count(cls, name, values[name])
        if values.get("line_search_fn", None) not in (None, "strong_wolfe"):
            raise ValueError(f"{cls}: line_search_fn must be None or 'strong_wolfe', got "
                             f"{values['line_search_fn']!r}")

    def add_param_group(self, group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups): "
                             "it optimizes all parameters as one vector")
        super().add_param_group(group)

    # ---- the parameters as one flat vector --------------------------------------------------
    def _flat_grad(self):
        """The gradients of all parameters end to end (zeros for a parameter without one),
        on the parameters' device."""
        first = self._params[0]
        flat = devices.empty(sum(p.numel() for p in self._params), first.dtype, first.device)
        offset = 0
        for p in self._params:
            flat[offset:offset + p.numel()] = 0 if p.grad is None else p.grad._data.reshape(-1)
            offset += p.numel()
        return flat

    def _move(self, t, d):
        """x = x + t * d, each parameter by its slice of d."""
        offset = 0
        for p in self._params:
            p._data += t * d[offset:offset + p.numel()].reshape(p.shape)
            offset += p.numel()

    def _loss_and_grad_at(self, closure, x, t, d):
        """The loss and flat gradient at x + t * d; the parameters are put back to x after."""
        self._move(t, d)
        loss = float(self._evaluate(closure))
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p._data[...] = saved
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        if closure is None:
            raise TypeError("LBFGS.step needs a closure: a function that re-evaluates the model "
                            "(zero_grad, forward, backward) and returns the loss")
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        # the state lives under the first parameter, as in PyTorch
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss = self._evaluate(closure)
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if _max_abs(flat_grad) <= tolerance_grad:
            return first_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                # two-loop recursion: d = -H g
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in reversed(range(len(old_dirs))):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q -= al[i] * old_dirs[i]
                d = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], d) * ro[i]
                    d += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:  # d is no descent direction
                break

            if group["line_search_fn"] == "strong_wolfe":
                x = [p._data.copy() for p in self._params]
                loss, flat_grad, t, step_evals = _strong_wolfe(
                    lambda x, t, d: self._loss_and_grad_at(closure, x, t, d), x, t, d, loss,
                    flat_grad, gtd, tolerance_change=tolerance_change, max_ls=max_eval - evals)
                self._move(t, d)
            else:
                self._move(t, d)
                step_evals = 0
                if n_iter != max_iter:  # the last iteration's loss is not needed
                    loss = float(self._evaluate(closure))
                    flat_grad = self._flat_grad()
                    step_evals = 1
            evals += step_evals
            state["func_evals"] += step_evals

            if (n_iter == max_iter or evals >= max_eval or _max_abs(flat_grad) <= tolerance_grad
                    or _max_abs(d * t) <= tolerance_change
                    or abs(loss - prev_loss) < tolerance_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return first_loss

    # ---- state: flat vectors and lists of them, not per-parameter arrays ---------------------
    def state_dict(self):
        saved = super().state_dict()
        saved["state"] = {index: {k: _packed(v) for k, v in entry.items()}
                          for index, entry in saved["state"].items()}
        return saved

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict) or not isinstance(state_dict.get("state"), dict):
            return super().load_state_dict(state_dict)  # which says what is wrong with it
        super().load_state_dict({**state_dict, "state": {}})
        p = self._params[0]
        for index, entry in state_dict["state"].items():
            if int(index) != 0:
                raise ValueError(f"LBFGS.load_state_dict: state is kept under parameter 0 only, "
                                 f"got an entry for parameter {index}")
            self.state[p] = {k: _unpacked(v, p) for k, v in entry.items()}


def _check_count(cls, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{cls}: {name} must be a whole number >= 1, got {_show(value)}")


def _dot(a, b):
    return float(np.dot(a, b))


def _max_abs(a):
    return float(np.abs(a).max())


def _packed(value):
    """A state value for state_dict: arrays as Tensors (copies), lists element by element."""
    if isinstance(value, list):
        return [_packed(v) for v in value]
    return Tensor._make(value.copy()) if devices.is_array(value) else value


def _unpacked(value, p):
    """A loaded state value: a vector as an array of p's device and dtype, a one-element
    Tensor (PyTorch keeps ys, al and H_diag as 0-d tensors) as a float, lists element by
    element."""
    if isinstance(value, (list, tuple)):
        return [_unpacked(v, p) for v in value]
    if isinstance(value, Tensor) or devices.is_array(value):
        array = value._data if isinstance(value, Tensor) else value
        if array.ndim == 0:
            return float(array.item())
        return devices.to_device(array, p.device).astype(p.dtype, copy=True)
    return value


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped
    to bounds (default: between x1 and x2); their midpoint where the cubic has no minimum
    (Nocedal & Wright, equation 3.59)."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, low), high)


def _strong_wolfe(loss_and_grad_at, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length t along d from x satisfying the strong Wolfe conditions
        f(x + t d) <= f + c1 t gtd   and   |g(x + t d).d| <= -c2 gtd
    (gtd = g.d < 0): first bracket such a t, growing t by cubic extrapolation, then shrink the
    bracket by cubic interpolation ("zoom"). Returns (loss, flat gradient, t, evaluations)."""
    d_norm = _max_abs(d)
    f_new, g_new = loss_and_grad_at(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing: [t_prev, t] holds a point satisfying the conditions once f rose or the slope
    # turned non-negative
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate, to between 1.01 t and 10 t
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = loss_and_grad_at(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations: the best of the start and the last try
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: bracket[low] has the lower loss; shrink until the conditions hold
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0],
                           bracket[1], bracket_f[1], bracket_gtd[1])
        # a t within 10% of the bracket's ends makes little progress: twice in a row, or
        # outside the bracket, move it to 10% inside the nearer end
        margin = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < margin:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - margin
                else:
                    t = min(bracket) + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = loss_and_grad_at(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            # no sufficient decrease: t becomes the high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                # the minimum lies between low and t: the old low end becomes the high end
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals
