"""``python -m pt2lint`` entry point."""

from pt2lint.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through subprocess tests
    main()
