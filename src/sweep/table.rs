//! A sweep's results table: one row per run with its number, its varied inputs, the figures
//! kept and its status (`ok`, or `failed` with the error), written as Parquet (through the
//! arrow crates) or CSV, read back, and merged from shards.

use crate::sweep::file::{Cell, CellKind, Shard};
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
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

fn arrow_error(e: impl std::fmt::Display) -> String {
    format!("results table: {e}")
}

impl SweepTable {
    /// Runs that failed.
    pub fn failed(&self) -> usize {
        self.rows.iter().filter(|r| r.error.is_some()).count()
    }

    fn schema(&self) -> Result<Arc<Schema>, String> {
        let mut fields = vec![Field::new("run", DataType::UInt64, false)];
        for (name, kind) in self.header.inputs.iter().zip(&self.input_kinds) {
            let data_type = match kind {
                CellKind::Number => DataType::Float64,
                CellKind::Text => DataType::Utf8,
                CellKind::Flag => DataType::Boolean,
            };
            fields.push(Field::new(name, data_type, false));
        }
        for name in &self.header.figures {
            fields.push(Field::new(name, DataType::Float64, true));
        }
        fields.push(Field::new("status", DataType::Utf8, false));
        fields.push(Field::new("error", DataType::Utf8, true));
        // One key: the arrow schema's metadata is a hash map, and one entry keeps the file's
        // bytes the same from run to run.
        let header = serde_json::to_string(&self.header).map_err(arrow_error)?;
        let metadata: std::collections::HashMap<String, String> =
            [(METADATA_KEY.to_string(), header)].into_iter().collect();
        Ok(Arc::new(Schema::new_with_metadata(fields, metadata)))
    }

    fn batch(&self) -> Result<RecordBatch, String> {
        let mut columns: Vec<ArrayRef> =
            vec![Arc::new(UInt64Array::from_iter_values(self.rows.iter().map(|r| r.run as u64)))];
        for (j, kind) in self.input_kinds.iter().enumerate() {
            let cells = self.rows.iter().map(|r| &r.inputs[j]);
            let column: ArrayRef = match kind {
                CellKind::Number => Arc::new(Float64Array::from_iter_values(cells.map(|c| {
                    if let Cell::Number(x) = c {
                        *x
                    } else {
                        f64::NAN
                    }
                }))),
                CellKind::Text => Arc::new(StringArray::from_iter_values(cells.map(|c| {
                    if let Cell::Text(s) = c {
                        s.as_str()
                    } else {
                        ""
                    }
                }))),
                CellKind::Flag => {
                    Arc::new(BooleanArray::from(cells.map(|c| matches!(c, Cell::Flag(true))).collect::<Vec<_>>()))
                }
            };
            columns.push(column);
        }
        for j in 0..self.header.figures.len() {
            columns.push(Arc::new(Float64Array::from(self.rows.iter().map(|r| r.figures[j]).collect::<Vec<_>>())));
        }
        columns.push(Arc::new(StringArray::from_iter_values(self.rows.iter().map(|r| {
            if r.error.is_some() {
                "failed"
            } else {
                "ok"
            }
        }))));
        columns.push(Arc::new(StringArray::from(self.rows.iter().map(|r| r.error.as_deref()).collect::<Vec<_>>())));
        RecordBatch::try_new(self.schema()?, columns).map_err(arrow_error)
    }

    /// The table as Parquet bytes (snappy-compressed, one row group).
    pub fn to_parquet(&self) -> Result<Vec<u8>, String> {
        let batch = self.batch()?;
        let properties = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
        let mut bytes = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).map_err(arrow_error)?;
        writer.write(&batch).map_err(arrow_error)?;
        writer.close().map_err(arrow_error)?;
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
        let (pending, mut file) = crate::support::output::PendingFile::create(path)?;
        file.write_all(&bytes).and_then(|_| file.sync_all()).map_err(|e| format!("{}: {e}", path.display()))?;
        drop(file);
        pending.commit()
    }

    /// Reads a table written by [`SweepTable::to_parquet`]; `origin` names it in messages.
    pub fn from_parquet(bytes: Vec<u8>, origin: &str) -> Result<SweepTable, String> {
        let fail = |e: &dyn std::fmt::Display| format!("{origin}: {e}");
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).map_err(|e| fail(&e))?;
        let schema = builder.schema().clone();
        let header: TableHeader = schema
            .metadata()
            .get(METADATA_KEY)
            .ok_or_else(|| fail(&"not a softgen sweep table (no `softgen.sweep` metadata)"))
            .and_then(|text| serde_json::from_str(text).map_err(|e| fail(&e)))?;
        let mut input_kinds = Vec::new();
        for name in &header.inputs {
            let field = schema.field_with_name(name).map_err(|e| fail(&e))?;
            input_kinds.push(match field.data_type() {
                DataType::Float64 => CellKind::Number,
                DataType::Utf8 => CellKind::Text,
                DataType::Boolean => CellKind::Flag,
                other => return Err(fail(&format!("input column `{name}` has type {other}"))),
            });
        }
        let mut rows = Vec::new();
        for batch in builder.build().map_err(|e| fail(&e))? {
            let batch = batch.map_err(|e| fail(&e))?;
            let column = |name: &str| batch.column_by_name(name).ok_or_else(|| fail(&format!("no column `{name}`")));
            let runs = column("run")?
                .as_any()
                .downcast_ref::<UInt64Array>()
                .ok_or_else(|| fail(&"`run` is not UInt64"))?
                .clone();
            let float = |name: &str| -> Result<Float64Array, String> {
                column(name)?
                    .as_any()
                    .downcast_ref::<Float64Array>()
                    .cloned()
                    .ok_or_else(|| fail(&format!("`{name}` is not Float64")))
            };
            let text = |name: &str| -> Result<StringArray, String> {
                column(name)?
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .cloned()
                    .ok_or_else(|| fail(&format!("`{name}` is not text")))
            };
            let figures: Vec<Float64Array> = header.figures.iter().map(|f| float(f)).collect::<Result<_, _>>()?;
            let errors = text("error")?;
            let mut inputs: Vec<Box<dyn Fn(usize) -> Cell>> = Vec::new();
            for (name, kind) in header.inputs.iter().zip(&input_kinds) {
                inputs.push(match kind {
                    CellKind::Number => {
                        let a = float(name)?;
                        Box::new(move |i| Cell::Number(a.value(i)))
                    }
                    CellKind::Text => {
                        let a = text(name)?;
                        Box::new(move |i| Cell::Text(a.value(i).to_string()))
                    }
                    CellKind::Flag => {
                        let a = column(name)?
                            .as_any()
                            .downcast_ref::<BooleanArray>()
                            .cloned()
                            .ok_or_else(|| fail(&format!("`{name}` is not boolean")))?;
                        Box::new(move |i| Cell::Flag(a.value(i)))
                    }
                });
            }
            for i in 0..batch.num_rows() {
                rows.push(RunRecord {
                    run: runs.value(i) as usize,
                    inputs: inputs.iter().map(|f| f(i)).collect(),
                    figures: figures.iter().map(|a| if a.is_null(i) { None } else { Some(a.value(i)) }).collect(),
                    error: if errors.is_null(i) { None } else { Some(errors.value(i).to_string()) },
                });
            }
        }
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
