"""The gate's steps, in the order it runs them; each yields one signal and its evidence."""
