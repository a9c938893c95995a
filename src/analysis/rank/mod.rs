//! Walk back from symptoms to causes, ranking multipliers, fault verdict; every tuning number in
//! `params.rs`.
