"""LeNet as in Caffe's MNIST example (examples/mnist/lenet_train_test.prototxt)."""
from .. import nn
from ..nn import init


class LeNet(nn.Module):
    """conv 20 5x5 -> max pool 2/2 -> conv 50 5x5 -> max pool 2/2 -> fc 500 -> relu -> fc 10.

    As in Caffe's example there is no nonlinearity after the convolutions, and the
    weights start from Caffe's "xavier" filler (uniform, variance 1 / fan_in), the
    biases from zero. Input: (N, 1, 28, 28); output: logits (N, num_classes)."""

    def __init__(self, num_classes=10, in_channels=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 20, 5)
        self.pool1 = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.pool2 = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(50 * 4 * 4, 500)
        self.relu = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(500, num_classes)
        self.reset_parameters()

    def reset_parameters(self):
        for layer in (self.conv1, self.conv2, self.fc1, self.fc2):
            # Caffe's xavier filler: U(-sqrt(3 / fan_in), +sqrt(3 / fan_in))
            init.kaiming_uniform_(layer.weight, a=1)
            init.zeros_(layer.bias)

    def forward(self, x):
        expected = (self.conv1.in_channels, 28, 28)
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"LeNet: input must be (N, {expected[0]}, 28, 28) images; got shape "
                             f"{tuple(x.shape)}")
        x = self.pool1(self.conv1(x))
        x = self.pool2(self.conv2(x))
        x = self.relu(self.fc1(self.flatten(x)))
        return self.fc2(x)
