from torchvision import _placeholder


def __getattr__(name):
    return _placeholder.make(__name__, name)

from torchvision.transforms import functional  # noqa: E402,F401
from torchvision.transforms.functional import InterpolationMode  # noqa: E402,F401
