//! Device values to comedi samples: which subdevice, which channel, which raw number.

use softgen_runtime::DeviceValue;

/// One analog output channel's range as comedi reports it: physical [min, max] volts mapped
/// linearly onto raw samples 0..=maxdata.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalogRange {
    pub min: f64,
    pub max: f64,
    pub maxdata: u32,
    /// comedi's index of this range on the channel.
    pub index: u32,
}

impl AnalogRange {
    /// The raw sample for `volts`, clamped to the range (a DAC cannot go further), or an
    /// error for a non-finite value.
    pub fn raw(&self, volts: f64) -> Result<u32, String> {
        if !volts.is_finite() {
            return Err(format!("non-finite voltage {volts}"));
        }
        let fraction = ((volts - self.min) / (self.max - self.min)).clamp(0.0, 1.0);
        Ok((fraction * self.maxdata as f64).round() as u32)
    }

    /// The voltage a raw sample produces.
    pub fn volts(&self, raw: u32) -> f64 {
        self.min + (self.max - self.min) * raw.min(self.maxdata) as f64 / self.maxdata as f64
    }
}

/// What one device value becomes on a comedi card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// `comedi_data_write` on the analog output subdevice.
    Analog { channel: u32, range: u32, raw: u32 },
    /// `comedi_dio_write` on the digital subdevice.
    Digital { channel: u32, bit: u32 },
}

/// Maps a device value given each analog channel's range; board values have no place on a
/// DAQ card.
pub fn sample(value: &DeviceValue, ranges: &[AnalogRange], digital_lines: u32) -> Result<Sample, String> {
    match *value {
        DeviceValue::Analog { channel, volts } => {
            let range = ranges.get(channel as usize).ok_or_else(|| {
                format!("analog output channel {channel} does not exist (the card has {})", ranges.len())
            })?;
            Ok(Sample::Analog { channel: channel as u32, range: range.index, raw: range.raw(volts)? })
        }
        DeviceValue::Digital { line, high } => {
            if u32::from(line) >= digital_lines {
                return Err(format!("digital line {line} does not exist (the card has {digital_lines})"));
            }
            Ok(Sample::Digital { channel: u32::from(line), bit: u32::from(high) })
        }
        DeviceValue::Board { channel, .. } | DeviceValue::Off { channel } => {
            Err(format!("board channel {channel}: a DAQ card has only analog and digital outputs"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NI PCI-6703: 16-bit outputs, +-10 V only. An SMC ITV3050 takes 0-10 V.
    const PCI_6703: AnalogRange = AnalogRange { min: -10.0, max: 10.0, maxdata: 65535, index: 0 };
    /// NI PCI-6221: 16-bit outputs, +-10 V (range 0) or +-5 V (range 1).
    const PCI_6221_5V: AnalogRange = AnalogRange { min: -5.0, max: 5.0, maxdata: 65535, index: 1 };

    #[test]
    fn volts_map_to_raw_samples_and_back() {
        assert_eq!(PCI_6703.raw(-10.0).unwrap(), 0);
        assert_eq!(PCI_6703.raw(0.0).unwrap(), 32768);
        assert_eq!(PCI_6703.raw(10.0).unwrap(), 65535);
        assert_eq!(PCI_6703.raw(12.0).unwrap(), 65535, "clamped: a DAC cannot go further");
        assert!(PCI_6703.raw(f64::NAN).is_err());
        for v in [-7.3, 0.0, 1.5, 6.0, 9.99] {
            assert!((PCI_6703.volts(PCI_6703.raw(v).unwrap()) - v).abs() <= 20.0 / 65535.0);
        }
        assert_eq!(PCI_6221_5V.raw(2.5).unwrap(), 49151);
    }

    #[test]
    fn device_values_map_to_channels_ranges_and_lines() {
        let ranges = [PCI_6221_5V, PCI_6703];
        assert_eq!(
            sample(&DeviceValue::Analog { channel: 1, volts: 5.0 }, &ranges, 8).unwrap(),
            Sample::Analog { channel: 1, range: 0, raw: 49151 }
        );
        assert_eq!(
            sample(&DeviceValue::Digital { line: 7, high: true }, &ranges, 8).unwrap(),
            Sample::Digital { channel: 7, bit: 1 }
        );
        assert!(sample(&DeviceValue::Analog { channel: 2, volts: 1.0 }, &ranges, 8)
            .unwrap_err()
            .contains("does not exist"));
        assert!(sample(&DeviceValue::Digital { line: 8, high: false }, &ranges, 8).is_err());
        assert!(sample(&DeviceValue::Off { channel: 0 }, &ranges, 8).unwrap_err().contains("only analog and digital"));
    }
}
