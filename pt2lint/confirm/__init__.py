"""Dynamic confirmation: run user code under torch to measure what Dynamo really does.

This subpackage is the only part of pt2lint that imports torch, and it does so
lazily, inside functions, so that importing it never requires torch.
"""
