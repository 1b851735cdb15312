from torchvision import _placeholder


def __getattr__(name):
    return _placeholder.make(__name__, name)
