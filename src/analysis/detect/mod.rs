//! The eleven rule detectors of docs/how-it-decides.md, one file each, listed in one registry.
