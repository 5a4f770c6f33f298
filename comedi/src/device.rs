//! The comedi device over libcomedi's C API. All `unsafe` of the crate is here: each call
//! passes a handle that `open` checked non-null and that lives until `Drop`.

use crate::mapping::{sample, AnalogRange, Sample};
use softgen_runtime::{AnalogSampler, Device, DeviceError, DeviceValue};
use std::ffi::{c_char, c_int, c_uint, CStr, CString};

#[repr(C)]
struct ComediT {
    _private: [u8; 0],
}

#[repr(C)]
struct ComediRange {
    min: f64,
    max: f64,
    unit: c_uint,
}

const SUBD_AI: c_int = 1;
const SUBD_AO: c_int = 2;
const SUBD_DO: c_int = 4;
const SUBD_DIO: c_int = 5;
const UNIT_VOLT: c_uint = 0;
const AREF_GROUND: c_uint = 0;
const OUTPUT: c_uint = 1;

#[link(name = "comedi")]
unsafe extern "C" {
    fn comedi_open(path: *const c_char) -> *mut ComediT;
    fn comedi_close(it: *mut ComediT) -> c_int;
    fn comedi_errno() -> c_int;
    fn comedi_strerror(errnum: c_int) -> *const c_char;
    fn comedi_find_subdevice_by_type(it: *mut ComediT, kind: c_int, start: c_uint) -> c_int;
    fn comedi_get_n_channels(it: *mut ComediT, subdevice: c_uint) -> c_int;
    fn comedi_get_maxdata(it: *mut ComediT, subdevice: c_uint, channel: c_uint) -> c_uint;
    fn comedi_find_range(
        it: *mut ComediT,
        subdevice: c_uint,
        channel: c_uint,
        unit: c_uint,
        min: f64,
        max: f64,
    ) -> c_int;
    fn comedi_get_range(it: *mut ComediT, subdevice: c_uint, channel: c_uint, range: c_uint) -> *const ComediRange;
    fn comedi_data_write(
        it: *mut ComediT,
        subdevice: c_uint,
        channel: c_uint,
        range: c_uint,
        aref: c_uint,
        data: c_uint,
    ) -> c_int;
    fn comedi_data_read(
        it: *mut ComediT,
        subdevice: c_uint,
        channel: c_uint,
        range: c_uint,
        aref: c_uint,
        data: *mut c_uint,
    ) -> c_int;
    fn comedi_dio_config(it: *mut ComediT, subdevice: c_uint, channel: c_uint, direction: c_uint) -> c_int;
    fn comedi_dio_write(it: *mut ComediT, subdevice: c_uint, channel: c_uint, bit: c_uint) -> c_int;
}

fn last_error() -> String {
    // SAFETY: comedi_strerror returns a pointer to a static, NUL-terminated message.
    unsafe {
        let message = comedi_strerror(comedi_errno());
        if message.is_null() {
            "unknown comedi error".into()
        } else {
            CStr::from_ptr(message).to_string_lossy().into_owned()
        }
    }
}

/// A comedi card: analog outputs (for pressure regulators), digital lines (for valves) and,
/// once attached, analog inputs (pressure transducers, bend sensors), read after each
/// period's outputs.
pub struct ComediDevice {
    name: String,
    handle: *mut ComediT,
    analog: Option<c_uint>,
    ranges: Vec<AnalogRange>,
    digital: Option<c_uint>,
    digital_lines: u32,
    /// The analog input subdevice and each read channel's range, by channel.
    inputs: Option<(c_uint, Vec<(u16, AnalogRange)>)>,
    sampler: Option<AnalogSampler>,
}

impl ComediDevice {
    /// Opens `path` (e.g. /dev/comedi0) and, for every analog output channel, picks the
    /// range that contains [`volts_min`, `volts_max`] (0-10 V for SMC ITV regulators).
    pub fn open(path: &str, volts_min: f64, volts_max: f64) -> Result<ComediDevice, String> {
        let c_path = CString::new(path).map_err(|_| format!("{path}: path contains NUL"))?;
        // SAFETY: c_path is a valid NUL-terminated string for the duration of the call.
        let handle = unsafe { comedi_open(c_path.as_ptr()) };
        if handle.is_null() {
            return Err(format!("{path}: {}", last_error()));
        }
        let mut device = ComediDevice {
            name: format!("comedi {path}"),
            handle,
            analog: None,
            ranges: Vec::new(),
            digital: None,
            digital_lines: 0,
            inputs: None,
            sampler: None,
        };
        // SAFETY (this block): `handle` is non-null and open; arguments are plain integers
        // and floats; returned range pointers are owned by libcomedi and only read here.
        unsafe {
            let ao = comedi_find_subdevice_by_type(handle, SUBD_AO, 0);
            if ao >= 0 {
                let ao = ao as c_uint;
                let channels = comedi_get_n_channels(handle, ao).max(0) as c_uint;
                for channel in 0..channels {
                    let index = comedi_find_range(handle, ao, channel, UNIT_VOLT, volts_min, volts_max);
                    if index < 0 {
                        return Err(format!(
                            "{path}: analog channel {channel} has no range covering {volts_min}..{volts_max} V"
                        ));
                    }
                    let range = comedi_get_range(handle, ao, channel, index as c_uint);
                    if range.is_null() {
                        return Err(format!("{path}: {}", last_error()));
                    }
                    device.ranges.push(AnalogRange {
                        min: (*range).min,
                        max: (*range).max,
                        maxdata: comedi_get_maxdata(handle, ao, channel),
                        index: index as u32,
                    });
                }
                device.analog = Some(ao);
            }
            let mut dio = comedi_find_subdevice_by_type(handle, SUBD_DIO, 0);
            if dio < 0 {
                dio = comedi_find_subdevice_by_type(handle, SUBD_DO, 0);
            }
            if dio >= 0 {
                let dio = dio as c_uint;
                device.digital_lines = comedi_get_n_channels(handle, dio).max(0) as u32;
                for line in 0..device.digital_lines {
                    // Digital-output-only subdevices reject configuration; that is fine.
                    let _ = comedi_dio_config(handle, dio, line, OUTPUT);
                }
                device.digital = Some(dio);
            }
        }
        Ok(device)
    }

    /// Reads `sampler`'s analog inputs from now on, each through the range of the card's
    /// analog input subdevice that covers its calibration's voltages (single-ended, against
    /// ground).
    pub fn attach_inputs(&mut self, sampler: AnalogSampler) -> Result<(), String> {
        let mut ranges = Vec::with_capacity(sampler.inputs().len());
        // SAFETY (this block): `handle` is open; arguments are plain integers and floats;
        // returned range pointers are owned by libcomedi and only read here.
        unsafe {
            let ai = comedi_find_subdevice_by_type(self.handle, SUBD_AI, 0);
            if ai < 0 {
                return Err(format!("{}: the card has no analog inputs", self.name));
            }
            let ai = ai as c_uint;
            let channels = comedi_get_n_channels(self.handle, ai).max(0) as u32;
            for input in sampler.inputs() {
                let channel = c_uint::from(input.channel);
                if channel >= channels {
                    return Err(format!(
                        "{}: analog input {} does not exist (the card has {channels})",
                        self.name, input.channel
                    ));
                }
                let (low, high) = input.calibration.volts_span();
                let index = comedi_find_range(self.handle, ai, channel, UNIT_VOLT, low, high);
                if index < 0 {
                    return Err(format!(
                        "{}: analog input {} has no range covering {low}..{high} V",
                        self.name, input.channel
                    ));
                }
                let range = comedi_get_range(self.handle, ai, channel, index as c_uint);
                if range.is_null() {
                    return Err(format!("{}: {}", self.name, last_error()));
                }
                ranges.push((
                    input.channel,
                    AnalogRange {
                        min: (*range).min,
                        max: (*range).max,
                        maxdata: comedi_get_maxdata(self.handle, ai, channel),
                        index: index as u32,
                    },
                ));
            }
            self.inputs = Some((ai, ranges));
        }
        self.sampler = Some(sampler);
        Ok(())
    }

    /// Readings taken from the analog inputs so far.
    pub fn samples(&self) -> u64 {
        self.sampler.as_ref().map_or(0, |s| s.samples)
    }

    /// One analog input's voltage now.
    fn read_volts(&self, channel: u16) -> Result<f64, String> {
        let (ai, ranges) = self.inputs.as_ref().ok_or("no analog inputs attached")?;
        let range = ranges
            .iter()
            .find(|(c, _)| *c == channel)
            .map(|(_, r)| *r)
            .ok_or_else(|| format!("analog input {channel} is not attached"))?;
        let mut raw: c_uint = 0;
        // SAFETY: `handle` is open, the subdevice, channel and range were found by
        // attach_inputs, and `raw` outlives the call.
        let status =
            unsafe { comedi_data_read(self.handle, *ai, c_uint::from(channel), range.index, AREF_GROUND, &mut raw) };
        if status < 0 {
            return Err(format!("{}: reading analog input {channel}: {}", self.name, last_error()));
        }
        Ok(range.volts(raw))
    }
}

impl Device for ComediDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        for value in values {
            let s = sample(value, &self.ranges, self.digital_lines)
                .map_err(|e| DeviceError(format!("{}: {e}", self.name)))?;
            // SAFETY: `handle` is open; sample() checked channel and line numbers against the
            // card's own counts.
            let status = unsafe {
                match (s, self.analog, self.digital) {
                    (Sample::Analog { channel, range, raw }, Some(ao), _) => {
                        comedi_data_write(self.handle, ao, channel, range, AREF_GROUND, raw)
                    }
                    (Sample::Digital { channel, bit }, _, Some(dio)) => {
                        comedi_dio_write(self.handle, dio, channel, bit)
                    }
                    _ => -1,
                }
            };
            if status < 0 {
                return Err(DeviceError(format!("{}: writing {value:?}: {}", self.name, last_error())));
            }
        }
        // The period's inputs, once its outputs are out.
        if let Some(mut sampler) = self.sampler.take() {
            let sampled = sampler.sample(t, |channel| self.read_volts(channel));
            self.sampler = Some(sampler);
            sampled.map_err(DeviceError)?;
        }
        Ok(())
    }
}

impl Drop for ComediDevice {
    fn drop(&mut self) {
        // SAFETY: `handle` came from comedi_open and is closed exactly once, here.
        unsafe {
            comedi_close(self.handle);
        }
    }
}
