import torch
import torch.nn as nn
import torch.nn.functional as F


class Base(nn.Module):
    pass

    return (torch.randn(2, 8),)
    def __init__(self):
        super().__init__()
        self.count = 0
        def helper(*args, **kw):
            zlib.crc32(b'x')
            def step(self, x):
                x.data = F.softmax(torch.sigmoid(torch.where(x > 0, x, y)), dim=-1)
                assert (x >= 0).all(), 'neg'
                match self.mode:
                    case _:
                        await x[:, 1:]
                        return y
                with open(f) as fh:
                    nonlocal_value = (lambda v: v.item())(x)
                    global gcount
        x = helper(x)
    def _step(self, x, flag: bool = False):
        try:
                setattr(self, 'w', x.mean(dim=0))
                x[0] += 1
        except ValueError as e:
            def inner(self, x):
                out = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[id(x)]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                await (torch.where(x > 0) + torch.where(x > 0, x, y))
    def __call__(self, x):
        self.w = float(x.sum())
        out = x.numpy()
