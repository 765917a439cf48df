"""Operations: nightly batch runs, the hot folder, and the crash-safe journal and file helpers under them."""
