//! The frame-motion contact kernels of soft robots: which frame carries each point, each
//! frame's own columns and axis, and the columns a segment of frames shares.

// The emitter's imports and helpers, shared by its files.
use super::shapes::{arms_by_shape, Arm, Functions};
use super::*;
use crate::dag::equations::Derivatives;
use quote::ToTokens;

/// Most coordinates a contact frame owns: a soft section's.
pub(super) const OWN_COLUMNS: usize = 3;

/// The frame-motion contact kernels of soft robots (see `Equations::frame_motion`): which
/// frame carries each point; per frame its own columns (a skin ring's section's) and x axis,
/// per segment of frames the columns they share; so the runtime pays for a skin ring's own
/// columns once however many of its points touch, and for the rest once per segment.
pub(super) fn contact_frames(
    equations: &Equations,
    cache: &HashMap<NodeId, Ident>,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
    kernel_reading: &dyn Fn(&[(TokenStream, NodeId)], &HashMap<NodeId, usize>) -> TokenStream,
    kernel_in_lanes: &dyn Fn(&[(TokenStream, NodeId)], &LimbLanes) -> TokenStream,
    read: &dyn Fn(NodeId) -> Option<String>,
) -> Result<(TokenStream, TokenStream), String> {
    if !equations.frame_motion {
        return Ok((TokenStream::new(), TokenStream::new()));
    }
    let dag = &equations.dag;
    let FrameColumns { segment_keys, segment_of, own_range, own_entries, own_kernels } =
        frame_columns(equations, kernel_reading)?;
    // The rings of a section are one shape (`shapes.rs`): one function each.
    let (own_arms, own_fns) = arms_by_shape(
        dag,
        cache,
        &own_kernels,
        &Functions {
            prefix: "contact_frame_own".into(),
            of: "contact_frame_own_into".into(),
            declarations: quote!(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut SMatrix<f64, 6, 3>, axis: &mut Vector3<f64>),
            own_functions: false,
        },
    );
    let segment_arms = segment_arms(dag, &segment_keys, kernel);
    // Each frame's points are consecutive (see `recursive::equations`): where they start.
    let mut start = vec![0u16; equations.contact_frames.len() + 1];
    for (k, &f) in equations.contact_frame_of.iter().enumerate() {
        start[f + 1] = k as u16 + 1;
    }
    let (sphere_arms, position_kernels) = frame_positions(equations, &start, kernel, kernel_reading);
    let (position_arms, position_fns) = arms_by_shape(
        dag,
        cache,
        &position_kernels,
        &Functions {
            prefix: "contact_frame_positions".into(),
            of: "contact_frame_positions_into".into(),
            declarations: quote!(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>]),
            own_functions: false,
        },
    );
    let (chunk_of, chunk_positions_arms, chunk_own_arms) =
        frame_chunks(equations, &segment_of, &own_range, &own_entries, &start, kernel_in_lanes, read);
    let (chunk_fn, chunk_impl) = chunk_items(&chunk_of, chunk_positions_arms, chunk_own_arms);
    let start = start.iter().map(|&s| Literal::u16_unsuffixed(s));
    let frame_of = equations.contact_frame_of.iter().map(|&f| Literal::u16_unsuffixed(f as u16));
    let segment_lits = segment_of.iter().map(|&s| Literal::u16_unsuffixed(s as u16));
    let own_lits = own_range.iter().map(|&(first, count)| {
        let (first, count) = (Literal::u16_unsuffixed(first as u16), Literal::u8_unsuffixed(count as u8));
        quote!((#first, #count))
    });
    Ok((
        quote! {
            /// The origin of contact frame `frame` in the world (into `centre`) and the radius of
            /// a ball about it that holds all the frame's points (infinite for frames that are
            /// not skin rings): a broad phase, since terrain that cannot reach the ball touches
            /// none of them.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_sphere(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, centre: &mut Vector3<f64>) -> f64 {
                match frame {
                    #sphere_arms
                    _ => f64::INFINITY,
                }
            }

            /// World positions of the contact points of frame `frame` (the others in `out`
            /// are left as they are).
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_positions_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                match frame {
                    #position_arms
                    _ => {}
                }
            }

            /// World Plücker columns of the coordinates that contact segment `segment`'s frames
            /// share (rows 0-2 angular, 3-5 linear about the world origin; zero for the frames'
            /// own coordinates and for coordinates that do not move them).
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_segment_into(segment: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, columns: &mut SMatrix<f64, 6, DOF>) {
                *columns = SMatrix::zeros();
                match segment {
                    #segment_arms
                    _ => {}
                }
            }

            /// World Plücker columns of contact frame `frame`'s own coordinates
            /// (`CONTACT_FRAME_OWN`; the rest of `own` zero) and its x axis.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_own_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut SMatrix<f64, 6, 3>, axis: &mut Vector3<f64>) {
                *own = SMatrix::zeros();
                match frame {
                    #own_arms
                    _ => *axis = Vector3::zeros(),
                }
            }

            #own_fns

            #position_fns

            #chunk_fn

            /// Per contact frame, its segment: the frames of a segment share the columns of
            /// every coordinate that is not their own.
            pub const CONTACT_FRAME_SEGMENT: &[u16] = &[#(#segment_lits),*];

            /// Per contact frame, the first of its own coordinates (whose columns differ from
            /// frame to frame within its segment) and how many there are.
            pub const CONTACT_FRAME_OWN: &[(u16, u8)] = &[#(#own_lits),*];
        },
        quote! {
            const CONTACT_FRAME_OF: &'static [u16] = &[#(#frame_of),*];
            const CONTACT_FRAME_START: &'static [u16] = &[#(#start),*];
            fn contact_frame_sphere(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, centre: &mut Vector3<f64>) -> f64 {
                contact_frame_sphere(frame, q, p, k, centre)
            }
            fn contact_frame_positions_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                contact_frame_positions_into(frame, q, p, k, out)
            }
            #chunk_impl
            const CONTACT_FRAME_SEGMENT: &'static [u16] = CONTACT_FRAME_SEGMENT;
            const CONTACT_FRAME_OWN: &'static [(u16, u8)] = CONTACT_FRAME_OWN;
            fn contact_segment_into(segment: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, columns: &mut SMatrix<f64, 6, DOF>) {
                contact_segment_into(segment, q, p, k, columns)
            }
            fn contact_frame_own_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, own: &mut SMatrix<f64, 6, 3>, axis: &mut Vector3<f64>) {
                contact_frame_own_into(frame, q, p, k, own, axis)
            }
        },
    ))
}

/// Each contact frame's own columns and x axis (a kernel per frame, as arms of a match), and
/// the segments of frames whose other columns are the same expressions.
struct FrameColumns<'a> {
    /// Per segment, the columns its frames share: (coordinate, its six entries).
    segment_keys: Vec<Vec<(usize, [NodeId; 6])>>,
    /// Per frame, its segment.
    segment_of: Vec<usize>,
    /// Per frame, its first own coordinate and how many it has.
    own_range: Vec<(usize, usize)>,
    /// Per frame, its own columns' entries that are not zero (`[(row, column)]`, node).
    own_entries: Vec<Vec<(TokenStream, NodeId)>>,
    own_kernels: Vec<Arm<'a>>,
}

/// Frames whose columns outside their own coordinates are the same expressions form a
/// segment (a section's rings, a rigid body's frames): the runtime builds those columns and
/// the segment's twist once, and each touching frame adds only its own columns.
fn frame_columns<'a>(
    equations: &Equations,
    kernel_reading: &'a dyn Fn(&[(TokenStream, NodeId)], &HashMap<NodeId, usize>) -> TokenStream,
) -> Result<FrameColumns<'a>, String> {
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut segment_keys: Vec<Vec<(usize, [NodeId; 6])>> = Vec::new();
    let mut segment_of = Vec::with_capacity(equations.contact_frames.len());
    let mut own_range = Vec::with_capacity(equations.contact_frames.len());
    let mut own_kernels = Vec::new();
    let mut own_entries: Vec<Vec<(TokenStream, NodeId)>> = Vec::with_capacity(equations.contact_frames.len());
    for (f, frame) in equations.contact_frames.iter().enumerate() {
        let first = frame.own.first().copied().unwrap_or(0);
        if frame.own.len() > OWN_COLUMNS || frame.own.iter().enumerate().any(|(c, &j)| j != first + c) {
            return Err(format!(
                "contact frame `{}`: its own coordinates {:?} are not at most {OWN_COLUMNS} consecutive ones",
                frame.name, frame.own
            ));
        }
        own_range.push((first, frame.own.len()));
        let mut key = Vec::new();
        let mut outputs = Vec::new();
        let mut entries = Vec::new();
        for &(j, column) in &frame.motion {
            let ids = [column.w[0], column.w[1], column.w[2], column.v[0], column.v[1], column.v[2]];
            match frame.own.iter().position(|&k| k == j) {
                Some(c) => {
                    let lc = idx(c);
                    for (row, &id) in ids.iter().enumerate() {
                        if dag.constant(id) != Some(0.0) {
                            let lr = idx(row);
                            outputs.push((quote!(own[(#lr, #lc)]), id));
                            entries.push((quote!([(#lr, #lc)]), id));
                        }
                    }
                }
                None => key.push((j, ids)),
            }
        }
        for (row, &id) in frame.axis.iter().enumerate() {
            let lr = idx(row);
            outputs.push((quote!(axis[#lr]), id));
        }
        own_entries.push(entries);
        own_kernels.push(Arm {
            pattern: idx(f).into_token_stream(),
            roots: outputs.iter().map(|(_, id)| *id).collect(),
            agree: outputs.iter().map(|(target, _)| target.to_string()).collect::<Vec<_>>().join(";"),
            body: Box::new(move |values, _| kernel_reading(&outputs, values)),
            call: quote!(q, p, cache, own, axis),
        });
        let segment = match segment_keys.iter().position(|k| *k == key) {
            Some(s) => s,
            None => {
                segment_keys.push(key);
                segment_keys.len() - 1
            }
        };
        segment_of.push(segment);
    }
    Ok(FrameColumns { segment_keys, segment_of, own_range, own_entries, own_kernels })
}

/// The `match` arms of `contact_segment_into`: per segment, the columns its frames share.
fn segment_arms(
    dag: &Dag,
    segment_keys: &[Vec<(usize, [NodeId; 6])>],
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> TokenStream {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut segment_arms = TokenStream::new();
    for (segment, key) in segment_keys.iter().enumerate() {
        let mut outputs = Vec::new();
        for &(j, ids) in key {
            let lj = idx(j);
            for (row, &id) in ids.iter().enumerate() {
                if dag.constant(id) != Some(0.0) {
                    let lr = idx(row);
                    outputs.push((quote!(columns[(#lr, #lj)]), id));
                }
            }
        }
        let body = kernel(&outputs);
        let ls = idx(segment);
        segment_arms.extend(quote!(#ls => { #body }));
    }
    segment_arms
}

/// The broad phase: per frame its origin and bounding radius (the arms of
/// `contact_frame_sphere`), and its points' positions (a kernel per frame; `start`: where
/// each frame's points start).
fn frame_positions<'a>(
    equations: &Equations,
    start: &[u16],
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
    kernel_reading: &'a dyn Fn(&[(TokenStream, NodeId)], &HashMap<NodeId, usize>) -> TokenStream,
) -> (TokenStream, Vec<Arm<'a>>) {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut sphere_arms = TokenStream::new();
    let mut position_kernels = Vec::new();
    for (f, frame) in equations.contact_frames.iter().enumerate() {
        let lf = idx(f);
        let mut outputs: Vec<(TokenStream, NodeId)> =
            frame.origin.iter().enumerate().map(|(a, &id)| (quote!(centre[#a]), id)).collect();
        let radius = match frame.radius {
            Some(id) => {
                outputs.push((quote!(let radius), id));
                quote!(radius.abs())
            }
            None => quote!(f64::INFINITY),
        };
        let body = kernel(&outputs);
        sphere_arms.extend(quote!(#lf => { #body #radius }));
        // Targets by point number, and by number among the frame's points (a shape's
        // function writes the frame's part of `out`).
        let (mut outputs, mut relative) = (Vec::new(), Vec::new());
        let first = start[f] as usize;
        for (k, &of) in equations.contact_frame_of.iter().enumerate() {
            if of == f {
                let (lk, li) = (idx(k), idx(k - first));
                for (a, &id) in equations.contact_positions[k].iter().enumerate() {
                    outputs.push((quote!(out[#lk][#a]), id));
                    relative.push((quote!(out[#li][#a]), id));
                }
            }
        }
        if outputs.is_empty() {
            continue;
        }
        let (from, to) = (idx(first), idx(start[f + 1] as usize));
        position_kernels.push(Arm {
            pattern: lf.into_token_stream(),
            roots: outputs.iter().map(|(_, id)| *id).collect(),
            agree: relative.iter().map(|(target, _)| target.to_string()).collect::<Vec<_>>().join(";"),
            body: Box::new(move |values, shared| kernel_reading(if shared { &relative } else { &outputs }, values)),
            call: quote!(q, p, cache, &mut out[#from..#to]),
        });
    }
    (sphere_arms, position_kernels)
}

/// `CONTACT_FRAME_CHUNK` and the chunks' kernels, with the `Model` impl's items for them;
/// robots without chunks keep the trait's defaults: each frame's own kernels, called
/// directly.
fn chunk_items(
    chunk_of: &[usize],
    chunk_positions_arms: TokenStream,
    chunk_own_arms: TokenStream,
) -> (TokenStream, TokenStream) {
    if chunk_of.iter().enumerate().all(|(f, &c)| c == f) {
        (TokenStream::new(), TokenStream::new())
    } else {
        let chunk_lits = chunk_of.iter().map(|&c| Literal::u16_unsuffixed(c as u16));
        (
            quote! {
                /// Per contact frame, the first frame of its chunk: neighbouring skin rings of
                /// one section, computed together in SIMD lanes by
                /// [`contact_chunk_positions_into`] and [`contact_chunk_own_into`].
                pub const CONTACT_FRAME_CHUNK: &[u16] = &[#(#chunk_lits),*];

                /// World positions of the contact points of every frame of the chunk that
                /// starts at frame `chunk` (the others in `out` are left as they are).
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_chunk_positions_into(chunk: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                    match chunk {
                        #chunk_positions_arms
                        _ => contact_frame_positions_into(chunk, q, p, cache, out),
                    }
                }

                /// Own columns and x axes (as [`contact_frame_own_into`]) of every frame of the
                /// chunk that starts at frame `chunk`, the chunk's first frame in `own[0]`.
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_chunk_own_into(chunk: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut [SMatrix<f64, 6, 3>; 4], axis: &mut [Vector3<f64>; 4]) {
                    match chunk {
                        #chunk_own_arms
                        _ => contact_frame_own_into(chunk, q, p, cache, &mut own[0], &mut axis[0]),
                    }
                }
            },
            quote! {
                const CONTACT_FRAME_CHUNK: &'static [u16] = CONTACT_FRAME_CHUNK;
                fn contact_chunk_positions_into(chunk: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                    contact_chunk_positions_into(chunk, q, p, k, out)
                }
                fn contact_chunk_own_into(chunk: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, own: &mut [SMatrix<f64, 6, 3>; 4], axis: &mut [Vector3<f64>; 4]) {
                    contact_chunk_own_into(chunk, q, p, k, own, axis)
                }
            },
        )
    }
}

/// Neighbouring skin rings of one section in chunks of up to [`WIDTH`], each chunk's points
/// and own columns one kernel in SIMD lanes (see [`LimbLanes::by_use`]): the rings are one
/// function of their section's intermediates, their own Stumpff values and their stations'
/// constants, so one lane expression computes a node of all of them. A chunk holds
/// consecutive frames of one segment with the same number of own coordinates and own columns
/// not all zero (a section's first ring, at its base, moves with the base alone). Returns
/// per frame its chunk's first frame, and the match arms of the chunks of two frames or more
/// (a frame alone keeps its own kernels).
fn frame_chunks(
    equations: &Equations,
    segment_of: &[usize],
    own_range: &[(usize, usize)],
    own_entries: &[Vec<(TokenStream, NodeId)>],
    start: &[u16],
    kernel_in_lanes: &dyn Fn(&[(TokenStream, NodeId)], &LimbLanes) -> TokenStream,
    read: &dyn Fn(NodeId) -> Option<String>,
) -> (Vec<usize>, TokenStream, TokenStream) {
    let frames = &equations.contact_frames;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let chunkable = |f: usize| frames[f].label.is_some() && own_range[f].1 > 0 && !own_entries[f].is_empty();
    // Each frame's own columns and axis, the outputs its lane of a chunk computes.
    let own_outputs = |g: usize| -> Vec<NodeId> {
        own_entries[g].iter().map(|(_, id)| *id).chain(frames[g].axis.iter().copied()).collect()
    };
    let labels = |members: std::ops::Range<usize>| -> Vec<String> {
        members.map(|g| frames[g].label.clone().unwrap_or_default()).collect()
    };
    let mut chunk_of: Vec<usize> = (0..frames.len()).collect();
    let mut f = 0;
    while f < frames.len() {
        if !chunkable(f) {
            f += 1;
            continue;
        }
        let mut end = f + 1;
        while end < frames.len()
            && end - f < WIDTH
            && chunkable(end)
            && segment_of[end] == segment_of[f]
            && own_range[end].1 == own_range[f].1
        {
            end += 1;
        }
        // The chunk ends before the first frame whose own columns are not the first frame's
        // lane expressions (a section's tip ring, whose station's constants fold away): such a
        // frame would be computed beside the others, not with them.
        if end - f >= 2 {
            let per_lane: Vec<Vec<NodeId>> = (f..end).map(own_outputs).collect();
            let lanes = LimbLanes::by_use(&equations.dag, &per_lane, &labels(f..end), read);
            let signs = |outputs: &[NodeId]| -> Vec<u64> { outputs.iter().map(|&id| lanes.signature(id)).collect() };
            let first = signs(&per_lane[0]);
            let alike = per_lane.iter().take_while(|outputs| signs(outputs) == first).count();
            end = f + alike.max(1);
        }
        for g in f..end {
            chunk_of[g] = f;
        }
        f = end;
    }
    let mut position_arms = TokenStream::new();
    let mut own_arms = TokenStream::new();
    for first in 0..frames.len() {
        let members: Vec<usize> = (first..frames.len()).take_while(|&g| chunk_of[g] == first).collect();
        if chunk_of[first] != first || members.len() < 2 {
            continue;
        }
        let labels = labels(first..first + members.len());
        // The points of every frame of the chunk.
        let mut outputs = Vec::new();
        let mut per_lane = Vec::new();
        for &g in &members {
            let mut lane = Vec::new();
            for k in start[g] as usize..start[g + 1] as usize {
                let lk = idx(k);
                for (a, &id) in equations.contact_positions[k].iter().enumerate() {
                    outputs.push((quote!(out[#lk][#a]), id));
                    lane.push(id);
                }
            }
            per_lane.push(lane);
        }
        let lanes = LimbLanes::by_use(&equations.dag, &per_lane, &labels, read);
        let body = kernel_in_lanes(&outputs, &lanes);
        let lf = idx(first);
        position_arms.extend(quote!(#lf => { #body }));
        // Their own columns and axes.
        let mut outputs = Vec::new();
        for (l, &g) in members.iter().enumerate() {
            let ll = idx(l);
            for (entry, id) in &own_entries[g] {
                outputs.push((quote!(own[#ll]#entry), *id));
            }
            for (row, &id) in frames[g].axis.iter().enumerate() {
                let lr = idx(row);
                outputs.push((quote!(axis[#ll][#lr]), id));
            }
        }
        let per_lane: Vec<Vec<NodeId>> = members.iter().map(|&g| own_outputs(g)).collect();
        let lanes = LimbLanes::by_use(&equations.dag, &per_lane, &labels, read);
        let body = kernel_in_lanes(&outputs, &lanes);
        let zero = members.iter().enumerate().map(|(l, _)| {
            let ll = idx(l);
            quote!(own[#ll] = SMatrix::zeros();)
        });
        own_arms.extend(quote!(#lf => { #(#zero)* #body }));
    }
    (chunk_of, position_arms, own_arms)
}

/// What the system Jacobian needs of every robot's contact frames (rigid links and skin
/// rings alike): which frame carries each point and which coordinates move each frame; each
/// frame's world columns and x axis (generated here for robots served point by point; soft
/// robots assemble them from their segment and own columns); and the columns' tangents
/// along a direction dq of the coordinates, differentiated in the DAG: one kernel for the
/// columns every frame beyond a coordinate shares (O(n) code, however many frames), one per
/// skin ring for its own. Points ride their frame, so a point's Jacobian, its velocity and
/// their derivatives all follow from these (`contact_frame.rs` in the runtime).
pub(super) fn contact_frame_tangents(
    equations: &Equations,
    cache: &HashMap<NodeId, Ident>,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
    loops: &dyn Fn(&[DirectionGroup], &HashMap<NodeId, usize>) -> TokenStream,
) -> Result<(TokenStream, TokenStream), String> {
    let dag = &equations.dag;
    let Some(derivatives) = &equations.derivatives else { return Ok((TokenStream::new(), TokenStream::new())) };
    let shared_body = kernel(&column_entries(
        dag,
        quote!(out),
        &mut derivatives.coordinate_columns.iter().enumerate().filter_map(|(j, c)| c.map(|c| (j, c))),
    ));
    let arms = own_tangent_arms(equations, derivatives, loops);
    // Each ring's tangents a function of its own (or of its shape's), not one arm of a
    // function as long as all the rings' together (see `body_in_loops`).
    let signature = quote!(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut [SMatrix<f64, 6, 3>; DOF]);
    let (all_arms, frame_fns) = arms_by_shape(
        dag,
        cache,
        &arms,
        &Functions {
            prefix: "contact_frame_own_tangents".into(),
            of: "contact_frame_own_tangents_into".into(),
            declarations: signature,
            own_functions: true,
        },
    );
    let point_frame = equations.contact_frame_of.iter().map(|&f| Literal::u16_unsuffixed(f as u16));
    let paths = equations.contact_frames.iter().map(|frame| {
        let mut path: Vec<usize> = frame.motion.iter().map(|(j, _)| *j).collect();
        path.sort_unstable();
        let path = path.into_iter().map(|j| Literal::u16_unsuffixed(j as u16));
        quote!(&[#(#path),*])
    });
    let (columns_fn, columns_impl) = frame_columns_items(equations, kernel);
    Ok((
        quote! {
            /// Per contact point, the frame carrying it (a rigid link, or a skin ring).
            pub const CONTACT_POINT_FRAME: &[u16] = &[#(#point_frame),*];

            /// Per contact frame, the coordinates that move it, ascending.
            pub const CONTACT_FRAME_PATH: &[&[u16]] = &[#(#paths),*];

            #columns_fn

            /// The tangent along a direction `dq` of the coordinates of each coordinate's world
            /// column as the contact frames beyond it see it (its joint's, or its section's
            /// tip's; zero for coordinates that move no contact frame but their own),
            /// differentiated in the expression DAG; dq = e_j gives d(column)/dq_j.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_columns_tangent_into(q: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 6, DOF>) {
                *out = SMatrix::zeros();
                #shared_body
            }

            /// The tangents of contact frame `frame`'s own columns along every unit direction:
            /// `own[j]` = d(own columns)/dq_j, in one loop per group of the coordinates that
            /// move them (zero for the others), what the directions share computed once.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_own_tangents_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut [SMatrix<f64, 6, 3>; DOF]) {
                *own = [SMatrix::zeros(); DOF];
                match frame {
                    #all_arms
                    _ => {}
                }
            }

            #frame_fns
        },
        quote! {
            const CONTACT_POINT_FRAME: &'static [u16] = CONTACT_POINT_FRAME;
            const CONTACT_FRAME_PATH: &'static [&'static [u16]] = CONTACT_FRAME_PATH;
            #columns_impl
            fn contact_columns_tangent_into(q: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 6, DOF>) {
                contact_columns_tangent_into(q, dq, p, k, out)
            }
            fn contact_frame_own_tangents_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, own: &mut [SMatrix<f64, 6, 3>; DOF]) {
                contact_frame_own_tangents_into(frame, q, p, k, own)
            }
        },
    ))
}

/// The entries of `columns` (coordinate, six entries) that are not zero, as outputs into
/// `target[(row, coordinate)]`.
fn column_entries(
    dag: &Dag,
    target: TokenStream,
    columns: &mut dyn Iterator<Item = (usize, [NodeId; 6])>,
) -> Vec<(TokenStream, NodeId)> {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut outputs = Vec::new();
    for (j, ids) in columns {
        for (row, &id) in ids.iter().enumerate() {
            if dag.constant(id) != Some(0.0) {
                let (lr, lj) = (idx(row), idx(j));
                outputs.push((quote!(#target[(#lr, #lj)]), id));
            }
        }
    }
    outputs
}

/// Each ring's tangents by direction group. The rings of a section differ in where they
/// sit along it, which changes numbers, not arithmetic: one function per shape.
fn own_tangent_arms<'a>(
    equations: &Equations,
    derivatives: &Derivatives,
    loops: &'a dyn Fn(&[DirectionGroup], &HashMap<NodeId, usize>) -> TokenStream,
) -> Vec<Arm<'a>> {
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut arms = Vec::new();
    for (f, own) in derivatives.contact_frames_own.iter().enumerate() {
        if own.is_empty() {
            continue;
        }
        let frame = &equations.contact_frames[f];
        // Own columns in the order of `CONTACT_FRAME_OWN`: consecutive from the first.
        let first = frame.own.first().copied().unwrap_or(0);
        // Every direction at once: a loop per group of the coordinates that move the ring.
        let groups: Vec<DirectionGroup> = derivatives.contact_frames_own_groups[f]
            .iter()
            .map(|(coordinates, columns)| {
                let mut outputs = Vec::new();
                for (j, column) in own.iter().zip(columns) {
                    let lc = idx(j - first);
                    for (row, &id) in column.iter().enumerate() {
                        if dag.constant(id) != Some(0.0) {
                            let lr = idx(row);
                            outputs.push((quote!(own[j][(#lr, #lc)]), id));
                        }
                    }
                }
                (coordinates.clone(), outputs)
            })
            .collect();
        let roots = groups.iter().flat_map(|(_, outputs)| outputs.iter().map(|(_, id)| *id)).collect();
        let agree = groups
            .iter()
            .map(|(coordinates, outputs)| {
                let targets: Vec<String> = outputs.iter().map(|(target, _)| target.to_string()).collect();
                format!("{coordinates:?} {}", targets.join(";"))
            })
            .collect::<Vec<_>>()
            .join("|");
        arms.push(Arm {
            pattern: idx(f).into_token_stream(),
            roots,
            agree,
            body: Box::new(move |values, _| loops(&groups, values)),
            call: quote!(q, p, cache, own),
        });
    }
    arms
}

/// `contact_frame_columns_into` (each frame's world columns and x axis) for robots served
/// point by point; soft robots assemble them from their segment and own columns.
fn frame_columns_items(
    equations: &Equations,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    if equations.frame_motion {
        (TokenStream::new(), TokenStream::new())
    } else {
        let mut arms = TokenStream::new();
        for (f, frame) in equations.contact_frames.iter().enumerate() {
            let mut motion = frame.motion.iter().map(|(j, m)| (*j, [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]]));
            let mut outputs = column_entries(dag, quote!(out), &mut motion);
            for (row, &id) in frame.axis.iter().enumerate() {
                let lr = idx(row);
                outputs.push((quote!(axis[#lr]), id));
            }
            let body = kernel(&outputs);
            let lf = idx(f);
            arms.extend(quote!(#lf => { #body }));
        }
        (
            quote! {
                /// World Plücker columns of contact frame `frame` (rows 0-2 angular, 3-5 linear
                /// about the world origin; zero for coordinates that do not move it) and its x
                /// axis.
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_frame_columns_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 6, DOF>, axis: &mut Vector3<f64>) {
                    *out = SMatrix::zeros();
                    *axis = Vector3::zeros();
                    match frame {
                        #arms
                        _ => {}
                    }
                }
            },
            quote! {
                fn contact_frame_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, columns: &mut SMatrix<f64, 6, DOF>, axis: &mut Vector3<f64>) {
                    contact_frame_columns_into(frame, q, p, k, columns, axis)
                }
            },
        )
    }
}
