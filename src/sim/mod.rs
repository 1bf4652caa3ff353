//! L2: the world (rods and their drivers) and the stepper.
