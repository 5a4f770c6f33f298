//! A sweep's results table: one row per run with its number, its varied inputs, the figures
//! kept and its status (`ok`, or `failed` with the error), written as Parquet or CSV, read
//! back, and merged from shards. Parquet through the format's own column writer and row
//! reader: a table of a few typed columns needs nothing of the arrow crates, which took a
//! quarter of a cold build's compiling.

use crate::sweep::file::{Cell, CellKind, Shard};
use parquet::basic::{Compression, ConvertedType, IntType, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::record::Field as Value;
use parquet::schema::types::Type;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// What one run gave.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// The run's number in the sweep (from 0).
    pub run: usize,
    /// Its varied inputs, in the table's input order.
    pub inputs: Vec<Cell>,
    /// The kept figures; None where the run failed or the figure does not exist for it.
    pub figures: Vec<Option<f64>>,
    /// Why the run failed; None when it ran.
    pub error: Option<String>,
}

/// What the table says about itself (stored in the file, one metadata key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableHeader {
    /// The sweep's name.
    pub sweep: String,
    /// The sweep's fingerprint (`Sweep::fingerprint`).
    pub fingerprint: String,
    /// Runs in the whole sweep.
    pub runs: usize,
    /// The input columns' names.
    pub inputs: Vec<String>,
    /// The figure columns' names.
    pub figures: Vec<String>,
    /// `K/N` for a shard's table; absent for a whole sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

/// The metadata key that holds the header.
const METADATA_KEY: &str = "softgen.sweep";

/// The results of a sweep or of one shard.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepTable {
    /// What the table says about itself.
    pub header: TableHeader,
    /// Each input column's kind.
    pub input_kinds: Vec<CellKind>,
    /// Ordered by run number.
    pub rows: Vec<RunRecord>,
}

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    /// Apache Parquet (snappy-compressed), the header in its metadata.
    Parquet,
    /// CSV: the run, a column per input and figure, its status and error.
    Csv,
}

fn table_error(e: impl std::fmt::Display) -> String {
    format!("results table: {e}")
}

/// One column of the table as Parquet stores it: its values and, for a column that may
/// lack a value, each row's definition level (1 present, 0 missing; the values then hold
/// only the present ones).
enum Column {
    /// Run numbers: 64-bit unsigned.
    Runs(Vec<i64>),
    Numbers {
        values: Vec<f64>,
        present: Option<Vec<i16>>,
    },
    Text {
        values: Vec<ByteArray>,
        present: Option<Vec<i16>>,
    },
    Flags(Vec<bool>),
}

impl Column {
    fn numbers(cells: impl Iterator<Item = Option<f64>>) -> Column {
        let (mut values, mut present) = (Vec::new(), Vec::new());
        for cell in cells {
            present.push(cell.is_some() as i16);
            values.extend(cell);
        }
        Column::Numbers { values, present: Some(present) }
    }

    fn text<'a>(cells: impl Iterator<Item = Option<&'a str>>) -> Column {
        let (mut values, mut present) = (Vec::new(), Vec::new());
        for cell in cells {
            present.push(cell.is_some() as i16);
            values.extend(cell.map(ByteArray::from));
        }
        Column::Text { values, present: Some(present) }
    }

    /// The column's place in the file's schema.
    fn schema(&self, name: &str) -> Result<Type, String> {
        // Both the logical type and the older converted type, as readers of either expect.
        let (physical, logical, converted, optional) = match self {
            Column::Runs(_) => (
                PhysicalType::INT64,
                Some(LogicalType::Integer(IntType { bit_width: 64, is_signed: false })),
                ConvertedType::UINT_64,
                false,
            ),
            Column::Numbers { present, .. } => (PhysicalType::DOUBLE, None, ConvertedType::NONE, present.is_some()),
            Column::Text { present, .. } => {
                (PhysicalType::BYTE_ARRAY, Some(LogicalType::String), ConvertedType::UTF8, present.is_some())
            }
            Column::Flags(_) => (PhysicalType::BOOLEAN, None, ConvertedType::NONE, false),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(if optional { Repetition::OPTIONAL } else { Repetition::REQUIRED })
            .with_logical_type(logical)
            .with_converted_type(converted)
            .build()
            .map_err(table_error)
    }

    fn write(&self, writer: &mut SerializedColumnWriter) -> Result<(), String> {
        match self {
            Column::Runs(values) => writer.typed::<Int64Type>().write_batch(values, None, None),
            Column::Numbers { values, present } => {
                writer.typed::<DoubleType>().write_batch(values, present.as_deref(), None)
            }
            Column::Text { values, present } => {
                writer.typed::<ByteArrayType>().write_batch(values, present.as_deref(), None)
            }
            Column::Flags(values) => writer.typed::<BoolType>().write_batch(values, None, None),
        }
        .map(|_| ())
        .map_err(table_error)
    }
}

impl SweepTable {
    /// Runs that failed.
    pub fn failed(&self) -> usize {
        self.rows.iter().filter(|r| r.error.is_some()).count()
    }

    /// The table's columns, named: the run, the inputs, the figures (missing where a run
    /// failed), the status and the error.
    fn columns(&self) -> Vec<(&str, Column)> {
        let mut columns = vec![("run", Column::Runs(self.rows.iter().map(|r| r.run as i64).collect()))];
        for (j, (name, kind)) in self.header.inputs.iter().zip(&self.input_kinds).enumerate() {
            let cells = self.rows.iter().map(|r| &r.inputs[j]);
            let column = match kind {
                CellKind::Number => Column::Numbers {
                    values: cells.map(|c| if let Cell::Number(x) = c { *x } else { f64::NAN }).collect(),
                    present: None,
                },
                CellKind::Text => Column::Text {
                    values: cells
                        .map(|c| ByteArray::from(if let Cell::Text(s) = c { s.as_str() } else { "" }))
                        .collect(),
                    present: None,
                },
                CellKind::Flag => Column::Flags(cells.map(|c| matches!(c, Cell::Flag(true))).collect()),
            };
            columns.push((name.as_str(), column));
        }
        for (j, name) in self.header.figures.iter().enumerate() {
            columns.push((name.as_str(), Column::numbers(self.rows.iter().map(|r| r.figures[j]))));
        }
        let status = self.rows.iter().map(|r| ByteArray::from(if r.error.is_some() { "failed" } else { "ok" }));
        columns.push(("status", Column::Text { values: status.collect(), present: None }));
        columns.push(("error", Column::text(self.rows.iter().map(|r| r.error.as_deref()))));
        columns
    }

    /// The table as Parquet bytes (snappy-compressed, one row group), the header in the
    /// file's metadata under one key.
    pub fn to_parquet(&self) -> Result<Vec<u8>, String> {
        let columns = self.columns();
        let fields =
            columns.iter().map(|(name, column)| column.schema(name).map(Arc::new)).collect::<Result<_, _>>()?;
        let schema = Type::group_type_builder("schema").with_fields(fields).build().map_err(table_error)?;
        let header = serde_json::to_string(&self.header).map_err(table_error)?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(vec![KeyValue::new(METADATA_KEY.to_string(), header)]))
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            SerializedFileWriter::new(&mut bytes, Arc::new(schema), Arc::new(properties)).map_err(table_error)?;
        let mut row_group = writer.next_row_group().map_err(table_error)?;
        for (name, column) in &columns {
            let mut column_writer = row_group
                .next_column()
                .map_err(table_error)?
                .ok_or_else(|| table_error(format!("no column `{name}` in the schema written")))?;
            column.write(&mut column_writer)?;
            column_writer.close().map_err(table_error)?;
        }
        row_group.close().map_err(table_error)?;
        writer.close().map_err(table_error)?;
        Ok(bytes)
    }

    /// The table as CSV: a header line, then one line per run; numbers as the shortest text
    /// that reads back to the same double, empty cells for missing figures.
    pub fn to_csv(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut header = vec!["run".to_string()];
        header.extend(self.header.inputs.iter().cloned());
        header.extend(self.header.figures.iter().cloned());
        header.extend(["status".to_string(), "error".to_string()]);
        let _ = writeln!(out, "{}", header.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(","));
        for r in &self.rows {
            let mut fields = vec![r.run.to_string()];
            fields.extend(r.inputs.iter().map(|c| match c {
                Cell::Number(x) => format!("{x:?}"),
                Cell::Text(s) => csv_field(s),
                Cell::Flag(b) => b.to_string(),
            }));
            fields.extend(r.figures.iter().map(|f| f.map_or(String::new(), |x| format!("{x:?}"))));
            fields.push(if r.error.is_some() { "failed".into() } else { "ok".into() });
            fields.push(r.error.as_deref().map_or(String::new(), csv_field));
            let _ = writeln!(out, "{}", fields.join(","));
        }
        out
    }

    /// Writes the table to `path` in `format`, replacing the file only once it is complete.
    pub fn write(&self, path: &Path, format: TableFormat) -> Result<(), String> {
        let bytes = match format {
            TableFormat::Parquet => self.to_parquet()?,
            TableFormat::Csv => self.to_csv(),
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let (pending, mut file) = softgen_app::PendingFile::create(path)?;
        file.write_all(&bytes).and_then(|_| file.sync_all()).map_err(|e| format!("{}: {e}", path.display()))?;
        drop(file);
        pending.commit()
    }

    /// Reads a table written by [`SweepTable::to_parquet`]; `origin` names it in messages.
    pub fn from_parquet(bytes: Vec<u8>, origin: &str) -> Result<SweepTable, String> {
        let fail = |e: &dyn std::fmt::Display| format!("{origin}: {e}");
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(|e| fail(&e))?;
        let metadata = reader.metadata().file_metadata();
        let header: TableHeader = metadata
            .key_value_metadata()
            .and_then(|pairs| pairs.iter().find(|pair| pair.key == METADATA_KEY))
            .and_then(|pair| pair.value.as_deref())
            .ok_or_else(|| fail(&"not a softgen sweep table (no `softgen.sweep` metadata)"))
            .and_then(|text| serde_json::from_str(text).map_err(|e| fail(&e)))?;
        let schema = metadata.schema_descr();
        let position = |name: &str| {
            (0..schema.num_columns())
                .find(|&i| schema.column(i).name() == name)
                .ok_or_else(|| fail(&format!("no column `{name}`")))
        };
        let mut inputs = Vec::new();
        for name in &header.inputs {
            let at = position(name)?;
            let kind = match schema.column(at).physical_type() {
                PhysicalType::DOUBLE => CellKind::Number,
                PhysicalType::BYTE_ARRAY => CellKind::Text,
                PhysicalType::BOOLEAN => CellKind::Flag,
                other => return Err(fail(&format!("input column `{name}` has type {other:?}"))),
            };
            inputs.push((name, at, kind));
        }
        let figures: Vec<(&String, usize)> =
            header.figures.iter().map(|name| position(name).map(|at| (name, at))).collect::<Result<_, _>>()?;
        let (run_at, error_at) = (position("run")?, position("error")?);
        let unexpected =
            |name: &str, value: &Value| fail(&format!("column `{name}` holds {value}, not what the table wrote there"));
        let mut rows = Vec::new();
        for row in reader.get_row_iter(None).map_err(|e| fail(&e))? {
            let row = row.map_err(|e| fail(&e))?;
            // A flat schema: the row's fields in the order of the columns.
            let values: Vec<&Value> = row.get_column_iter().map(|(_, value)| value).collect();
            let value = |at: usize| values.get(at).copied().ok_or_else(|| fail(&"a row shorter than the schema"));
            let run = match value(run_at)? {
                Value::ULong(n) => *n as usize,
                other => return Err(unexpected("run", other)),
            };
            let mut cells = Vec::with_capacity(inputs.len());
            for &(name, at, kind) in &inputs {
                cells.push(match (kind, value(at)?) {
                    (CellKind::Number, Value::Double(x)) => Cell::Number(*x),
                    (CellKind::Text, Value::Str(s)) => Cell::Text(s.clone()),
                    (CellKind::Flag, Value::Bool(b)) => Cell::Flag(*b),
                    (_, other) => return Err(unexpected(name, other)),
                });
            }
            let mut kept = Vec::with_capacity(figures.len());
            for &(name, at) in &figures {
                kept.push(match value(at)? {
                    Value::Double(x) => Some(*x),
                    Value::Null => None,
                    other => return Err(unexpected(name, other)),
                });
            }
            let error = match value(error_at)? {
                Value::Str(s) => Some(s.clone()),
                Value::Null => None,
                other => return Err(unexpected("error", other)),
            };
            rows.push(RunRecord { run, inputs: cells, figures: kept, error });
        }
        let input_kinds = inputs.iter().map(|&(_, _, kind)| kind).collect();
        Ok(SweepTable { header, input_kinds, rows })
    }

    /// Joins the tables of a sweep's shards into the table the whole sweep gives on one
    /// machine: every shard of the same sweep, each once, every run once.
    pub fn merge(shards: Vec<(String, SweepTable)>) -> Result<SweepTable, String> {
        let Some((first_origin, first)) = shards.first() else {
            return Err("nothing to merge: give the shards' tables".into());
        };
        let count = first.shard().map_err(|e| format!("{first_origin}: {e}"))?.map_or(1, |s| s.count);
        let mut seen = vec![None::<&str>; count];
        for (origin, table) in &shards {
            if table.header.fingerprint != first.header.fingerprint || table.header.sweep != first.header.sweep {
                return Err(format!(
                    "{origin} is from sweep `{}` ({}), {first_origin} from `{}` ({}): shards of different sweeps (or of a changed sweep file) do not merge",
                    table.header.sweep, table.header.fingerprint, first.header.sweep, first.header.fingerprint
                ));
            }
            let shard = table.shard().map_err(|e| format!("{origin}: {e}"))?;
            let Some(shard) = shard else {
                return Err(format!("{origin} is a whole sweep's table, not a shard"));
            };
            if shard.count != count {
                return Err(format!("{origin} is shard {shard}, but {first_origin} is one of {count}"));
            }
            if let Some(other) = seen[shard.index] {
                return Err(format!("{origin} and {other} are both shard {shard}"));
            }
            seen[shard.index] = Some(origin);
        }
        if let Some(k) = seen.iter().position(Option::is_none) {
            return Err(format!("shard {k}/{count} is missing"));
        }
        let mut rows: Vec<RunRecord> = shards.iter().flat_map(|(_, t)| t.rows.iter().cloned()).collect();
        rows.sort_by_key(|r| r.run);
        for (expected, row) in rows.iter().enumerate() {
            if row.run != expected {
                return Err(format!(
                    "run {expected} of {} is missing or repeated in the shards (found run {} there): were they all run to the end?",
                    first.header.runs, row.run
                ));
            }
        }
        if rows.len() != first.header.runs {
            return Err(format!("the shards hold {} runs, the sweep has {}", rows.len(), first.header.runs));
        }
        let mut header = first.header.clone();
        header.shard = None;
        Ok(SweepTable { header, input_kinds: first.input_kinds.clone(), rows })
    }

    fn shard(&self) -> Result<Option<Shard>, String> {
        self.header.shard.as_deref().map(Shard::parse).transpose()
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
