"""Commands that plug into the ``pt2lint`` click group from their own modules (see ``pt2lint.cli``)."""
