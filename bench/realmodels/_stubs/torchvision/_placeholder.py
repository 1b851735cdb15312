"""Placeholder factory: any attribute resolves to a class that raises on use."""


def make(modname: str, name: str):
    if name.startswith("__"):
        raise AttributeError(name)

    def _fail(*args, **kwargs):
        raise RuntimeError(f"torchvision stub: {modname}.{name} is not available")

    return type(name, (), {"__init__": _fail, "__module__": modname})
