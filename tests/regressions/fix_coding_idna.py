# coding: idna
class Fuzzed(N.Module):
    def __init__(self):
        self.lin = nn.Linear(3, 3)
    def forward(self, *xs, **kw):
        print(((x.view(-1) * x.masked_select(mask)) * torch.nonzero(x)))
