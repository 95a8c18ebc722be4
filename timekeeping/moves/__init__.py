"""Timed moves (SPEC A*, docs/timed-moves.md): rows of a brand's tables that move on by
themselves when a moment passes, checked from the manifest's `tables` section and run by the
tick's moves phase."""
