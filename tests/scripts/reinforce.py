"""REINFORCE in the style of the classic policy-gradient example, on a small hand-written
environment instead of a gym one, with only its imports renamed: `import torch` became
`import minifw as torch`.
The environment is a one-dimensional balancing game: random gusts push a position left or
right, the agent pushes back, and every step before the position leaves its range pays 1.
The policy network's softmax gives a Categorical distribution; each action is sampled and its
log_prob kept. At the end of an episode the discounted returns are computed backwards,
normalized by their mean and standard deviation (plus the float32 machine epsilon), and the
policy-gradient loss is the sum of -log_prob * return, concatenated with torch.cat (the
entropies, logged, with torch.stack). A running reward follows the progress."""
from collections import deque

import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.functional as F
import minifw.optim as optim
from minifw.distributions import Categorical

eps = np.finfo(np.float32).eps.item()


class Balance:
    """A pole-balancing stand-in: a position in -3..3 that a random gust moves by -1, 0 or +1
    each step, and the agent by -1 (action 0) or +1 (action 1). The episode ends when the
    position leaves -3..3; every step survived pays 1, up to max_steps."""

    def __init__(self, limit=3, max_steps=25):
        self.limit, self.max_steps = limit, max_steps
        self.rng = np.random.RandomState(0)

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.RandomState(seed)
        self.position = int(self.rng.randint(-1, 2))
        self.steps = 0
        return self._observation(), {}

    def _observation(self):
        obs = np.zeros(2 * self.limit + 1, dtype=np.float32)
        obs[self.position + self.limit] = 1.0
        return obs

    def step(self, action):
        self.position += (1 if action == 1 else -1) + int(self.rng.randint(-1, 2))
        self.steps += 1
        terminated = abs(self.position) > self.limit
        if terminated:
            self.position = max(-self.limit, min(self.limit, self.position))
        truncated = self.steps >= self.max_steps
        return self._observation(), 1.0, terminated, truncated, {}


class Policy(nn.Module):
    def __init__(self, observations=7, actions=2, hidden=32, dropout=0.1):
        super().__init__()
        self.affine1 = nn.Linear(observations, hidden)
        self.dropout = nn.Dropout(p=dropout)
        self.affine2 = nn.Linear(hidden, actions)

        self.saved_log_probs = []
        self.entropies = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


def select_action(policy, state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    policy.entropies.append(m.entropy())
    return action.item()


def finish_episode(policy, optimizer, gamma):
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    entropy = torch.stack(policy.entropies).mean().item()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    del policy.entropies[:]
    return policy_loss.item(), entropy


def main(episodes=100, gamma=0.99, lr=2e-2, seed=0, dropout=0.1, init=None, log=print):
    torch.manual_seed(seed)
    env = Balance()
    policy = Policy(dropout=dropout)
    if init is not None:
        init(policy)
    initial = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    optimizer = optim.Adam(policy.parameters(), lr=lr)
    running_reward = 10
    history = {"reward": [], "running_reward": [], "loss": [], "entropy": [], "length": []}
    state, _ = env.reset(seed=seed)
    for i_episode in range(episodes):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(policy, state)
            state, reward, terminated, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss, entropy = finish_episode(policy, optimizer, gamma)
        history["reward"].append(ep_reward)
        history["running_reward"].append(running_reward)
        history["loss"].append(loss)
        history["entropy"].append(entropy)
        history["length"].append(t)
        if i_episode % 20 == 0:
            log(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                f"Average reward: {running_reward:.2f}")
    return {"history": history, "initial": initial, "policy": policy}


if __name__ == "__main__":
    main()
