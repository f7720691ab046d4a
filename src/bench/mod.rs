//! Replay bench (feature `bench`): under construction.
