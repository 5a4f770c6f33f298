//! Linux comedi device for softgen: the open driver stack for NI PCI-6221 and
//! PCI-6703 cards. The mapping from device values (volts, digital lines) to comedi
//! subdevices, channels, ranges and raw samples (outputs, and inputs back to volts) is plain Rust and always built; the device
//! itself links libcomedi and is behind the `ffi` feature.

#![deny(unsafe_code)]

mod mapping;

pub use mapping::{sample, AnalogRange, Sample};

#[cfg(feature = "ffi")]
#[allow(unsafe_code)]
mod device;

#[cfg(feature = "ffi")]
pub use device::ComediDevice;
