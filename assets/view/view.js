// The 3D view of a softgen run: draws the frames softgen sampled from the run (bodies' poses,
// sections' centre-line frames, contacts and their forces, the centre of mass, thrusts) with
// three.js. Nothing here computes the robot's motion: every position comes from the page's
// data. Options after '#' in the address: t=<seconds> (start there, paused), paused,
// follow (the camera follows the centre of mass), distance=<metres> (the camera's),
// test (no panel or bar, no antialiasing), camera=top|side|front with centre=x,y,z and
// span=<metres across the height> (an orthographic camera), size=<width>x<height> (the
// drawing's size in pixels, whatever the window's): for screenshots.
(function () {
  'use strict';
  const errors = [];
  window.addEventListener('error', (e) => errors.push(String(e.message)));
  const consoleError = console.error.bind(console);
  console.error = (...args) => { errors.push(args.map(String).join(' ')); consoleError(...args); };
  const started = performance.now();

  const RUN = JSON.parse(document.getElementById('run-data').textContent);
  function floats(base64) {
    const text = atob(base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }
  const times = floats(RUN.times);
  const com = floats(RUN.com);
  const poses = floats(RUN.poses);
  const contacts = floats(RUN.contacts);
  const thrusts = floats(RUN.thrusts);
  const values = floats(RUN.series_values);
  const offsets = RUN.contact_offsets;
  const samples = times.length;
  const frameCount = RUN.frame_count;
  const seriesCount = RUN.series.length;

  const options = {};
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const [key, value] = part.split('=');
    options[decodeURIComponent(key)] = value === undefined ? true : decodeURIComponent(value);
  }
  const testing = Boolean(options.test);
  // The sample the page opens at (t=..., else the first).
  function sampleAtStart() {
    const t = options.t !== undefined ? Number(options.t) : times[0];
    let s = 0;
    while (s + 1 < samples && times[s + 1] <= t + 1e-6 * (1 + Math.abs(t))) s++;
    return s;
  }
  if (testing) document.body.classList.add('test');

  THREE.Object3D.DEFAULT_UP.set(0, 0, 1);
  const main = document.getElementById('main');
  const renderer = new THREE.WebGLRenderer({ antialias: !testing, preserveDrawingBuffer: true });
  renderer.setPixelRatio(testing ? 1 : window.devicePixelRatio);
  main.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xffffff);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8a8a8a, 2.0));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(-2, -3, 5);
  scene.add(sun);

  // The run's extent: every frame origin and the centre of mass, over all samples.
  const low = new THREE.Vector3(Infinity, Infinity, Infinity);
  const high = new THREE.Vector3(-Infinity, -Infinity, -Infinity);
  const grow = (x, y, z) => { low.min(new THREE.Vector3(x, y, z)); high.max(new THREE.Vector3(x, y, z)); };
  for (let s = 0; s < samples; s++) {
    grow(com[3 * s], com[3 * s + 1], com[3 * s + 2]);
    for (let f = 0; f < frameCount; f++) {
      const o = (s * frameCount + f) * 7;
      grow(poses[o], poses[o + 1], poses[o + 2]);
    }
  }
  const first = new THREE.Vector3(), start = new THREE.Box3(), size = new THREE.Vector3();
  for (let f = 0; f < frameCount; f++) start.expandByPoint(first.set(poses[7 * f], poses[7 * f + 1], poses[7 * f + 2]));
  start.getSize(size);
  const bodyLength = Math.max(size.length(), 0.05);
  const extent = Math.max(high.clone().sub(low).length(), bodyLength, 0.1);
  const middle = low.clone().add(high).multiplyScalar(0.5);

  // Terrain and water.
  const terrain = RUN.terrain;
  const ground = new THREE.MeshStandardMaterial({ color: 0xd8d2c4, roughness: 1, side: THREE.DoubleSide });
  const far = 4 * extent + 2;
  function plane(z, x0, x1) {
    const mesh = new THREE.Mesh(new THREE.PlaneGeometry(x1 - x0, 2 * far), ground);
    mesh.position.set((x0 + x1) / 2, middle.y, z - 1e-4 * extent);
    scene.add(mesh);
    const grid = new THREE.GridHelper(2 * far, Math.round(2 * far / gridStep()), 0xb8b0a0, 0xc8c0b0);
    grid.rotation.x = Math.PI / 2;
    grid.position.set(middle.x, middle.y, z);
    grid.material.transparent = true;
    grid.material.opacity = 0.6;
    return grid;
  }
  function gridStep() {
    const raw = extent / 8;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map((k) => k * power).find((k) => k >= raw);
  }
  if (terrain.kind === 'flat' || terrain.kind === 'floor') {
    scene.add(plane(terrain.kind === 'flat' ? terrain.height : 0, middle.x - far, middle.x + far));
  } else if (terrain.kind === 'stair') {
    scene.add(plane(0, middle.x - far, terrain.position));
    const depth = far;
    const step = new THREE.Mesh(new THREE.BoxGeometry(depth, 2 * far, terrain.height + 0.02 * extent), ground);
    step.position.set(terrain.position + depth / 2, middle.y, (terrain.height - 0.02 * extent) / 2);
    scene.add(step);
  } else if (terrain.kind === 'pipe') {
    const length = high.x - low.x + 2 * extent;
    const geometry = new THREE.CylinderGeometry(terrain.diameter / 2, terrain.diameter / 2, length, 48, 1, true);
    const pipe = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({ color: 0x9aa4ad, transparent: true, opacity: 0.25, side: THREE.DoubleSide, depthWrite: false }));
    pipe.rotation.z = -Math.PI / 2;
    pipe.position.set(middle.x, 0, 0);
    scene.add(pipe);
  } else if (!RUN.water) {
    scene.add(plane(low.z - 0.05 * extent, middle.x - far, middle.x + far));
  }
  if (RUN.water) {
    const pad = 0.3 * extent;
    const box = high.clone().sub(low).addScalar(2 * pad);
    const water = new THREE.Mesh(new THREE.BoxGeometry(box.x, box.y, box.z), new THREE.MeshStandardMaterial({ color: 0x2f7fd0, transparent: true, opacity: 0.12, depthWrite: false }));
    water.position.copy(middle);
    scene.add(water);
    const edges = new THREE.LineSegments(new THREE.EdgesGeometry(water.geometry), new THREE.LineBasicMaterial({ color: 0x2f7fd0, transparent: true, opacity: 0.5 }));
    edges.position.copy(middle);
    scene.add(edges);
  }

  // Bodies: rigid bodies as boxes riding their frames, soft sections as tubes through their
  // centre-line frames with their chambers inside, each section's tip marked.
  const palette = [0x3f6fb5, 0x4f9a5a, 0xc0843a, 0x8a5bb0, 0x3a9aa5, 0xb5524f, 0x7a7f3a];
  const chamberColours = [0xd62728, 0x2ca02c, 0x1f77b4];
  // Markers drawn last, over everything, translucent bodies and water included (three.js
  // draws transparent objects after opaque ones, in render order).
  const TIP = 0x00c8ff, COM = 0xff00ff, TOUCH = 0xff8c00, FORCE = 0xe65c00, THRUST = 0x17becf;
  const drawn = RUN.bodies.map((body, index) => {
    const colour = palette[index % palette.length];
    if (body.section === null) {
      const group = new THREE.Group();
      const half = body.half_extents;
      const box = new THREE.Mesh(new THREE.BoxGeometry(2 * half[0], 2 * half[1], 2 * half[2]), new THREE.MeshStandardMaterial({ color: colour, roughness: 0.6 }));
      box.position.set(body.centre[0], body.centre[1], body.centre[2]);
      group.add(box);
      scene.add(group);
      return { body, group };
    }
    const material = new THREE.MeshStandardMaterial({ color: colour, roughness: 0.5, transparent: true, opacity: body.chambers ? 0.45 : 0.85, depthWrite: !body.chambers });
    const tube = new THREE.Mesh(new THREE.BufferGeometry(), material);
    scene.add(tube);
    const chambers = (body.chambers ? body.chambers.angles : []).map((angle, k) => {
      const mesh = new THREE.Mesh(new THREE.BufferGeometry(), new THREE.MeshStandardMaterial({ color: chamberColours[k % 3], roughness: 0.5 }));
      scene.add(mesh);
      return { angle, mesh };
    });
    const tip = new THREE.Mesh(new THREE.SphereGeometry(Math.max(0.5 * body.radius, 0.006 * bodyLength), 16, 12), new THREE.MeshBasicMaterial({ color: TIP, depthTest: false, transparent: true, opacity: 1 }));
    tip.renderOrder = 10;
    scene.add(tip);
    return { body, tube, chambers, tip };
  });
  const legend = document.getElementById('legend');
  RUN.bodies.forEach((body, index) => {
    const span = document.createElement('span');
    span.innerHTML = '<b style="color:#' + palette[index % palette.length].toString(16).padStart(6, '0') + '">&#9632;</b> ' + body.name;
    legend.appendChild(span);
  });

  const comMarker = new THREE.Mesh(new THREE.SphereGeometry(0.02 * bodyLength, 16, 12), new THREE.MeshBasicMaterial({ color: COM, depthTest: false, transparent: true, opacity: 1 }));
  comMarker.renderOrder = 11;
  scene.add(comMarker);
  const trailPositions = new Float32Array(com);
  const trailGeometry = new THREE.BufferGeometry();
  trailGeometry.setAttribute('position', new THREE.BufferAttribute(trailPositions, 3));
  const trail = new THREE.Line(trailGeometry, new THREE.LineBasicMaterial({ color: 0xc0392b }));
  scene.add(trail);

  // Contacts in touch and their forces, from a pool as large as the most at any sample.
  let most = 0;
  for (let s = 0; s < samples; s++) most = Math.max(most, offsets[s + 1] - offsets[s]);
  const weight = Math.max(RUN.mass * 9.81, 1e-9);
  const forceScale = 0.5 * bodyLength / weight;
  const touchGeometry = new THREE.SphereGeometry(0.008 * bodyLength, 10, 8);
  const touchMaterial = new THREE.MeshBasicMaterial({ color: TOUCH });
  const touches = [];
  for (let k = 0; k < most; k++) {
    const dot = new THREE.Mesh(touchGeometry, touchMaterial);
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, FORCE);
    scene.add(dot, arrow);
    touches.push({ dot, arrow });
  }
  const thrusters = RUN.thrusters.map(() => {
    const arrow = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, THRUST);
    scene.add(arrow);
    return arrow;
  });
  let largestThrust = 1e-9;
  for (const t of thrusts) largestThrust = Math.max(largestThrust, Math.abs(t));

  // Camera: the plane of motion seen face on, or spatial runs from the front left, above.
  // size=WxH fixes the drawing's size in pixels whatever the window's (screenshots).
  const fixed = /^(\d+)x(\d+)$/.exec(options.size || '');
  function canvasSize() {
    if (fixed) return { width: Number(fixed[1]), height: Number(fixed[2]) };
    const box = main.getBoundingClientRect();
    return { width: box.width, height: box.height };
  }
  const view = canvasSize();
  let camera;
  let target = middle.clone();
  const orthographic = ['top', 'side', 'front'].includes(options.camera);
  if (orthographic) {
    const span = Number(options.span) || extent;
    const aspect = view.width / view.height;
    camera = new THREE.OrthographicCamera(-span * aspect / 2, span * aspect / 2, span / 2, -span / 2, -100 * extent - 100, 100 * extent + 100);
    const centre = options.centre ? options.centre.split(',').map(Number) : middle.toArray();
    target = new THREE.Vector3(...centre);
    const away = { top: [0, 0, 1], side: [0, -1, 0], front: [-1, 0, 0] }[options.camera];
    camera.up.set(...(options.camera === 'top' ? [0, 1, 0] : [0, 0, 1]));
    camera.position.copy(target).add(new THREE.Vector3(...away).multiplyScalar(10 * extent + 10));
    camera.lookAt(target);
  } else {
    camera = new THREE.PerspectiveCamera(40, view.width / view.height, extent / 1000, extent * 100);
    const direction = RUN.plane === 'xz' ? new THREE.Vector3(0.15, -1, 0.25) : RUN.plane === 'xy' ? new THREE.Vector3(0, -0.6, 1) : new THREE.Vector3(-0.7, -1, 0.65);
    // Following from the start: aimed at the centre of mass there, as close as asked.
    if (options.follow && samples > 0) {
      const s = sampleAtStart();
      target.set(com[3 * s], com[3 * s + 1], com[3 * s + 2]);
    }
    const distance = Number(options.distance) || 1.6 * (options.follow ? Math.max(bodyLength, 0.1) * 1.5 : extent);
    camera.position.copy(target).add(direction.normalize().multiplyScalar(distance));
  }
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.target.copy(target);
  controls.enabled = !testing;
  controls.update();
  controls.addEventListener('change', () => render());

  function resize() {
    const box = canvasSize();
    renderer.setSize(box.width, box.height);
    if (camera.isPerspectiveCamera) camera.aspect = box.width / box.height;
    else {
      const span = camera.top - camera.bottom;
      camera.left = -span * box.width / box.height / 2;
      camera.right = -camera.left;
    }
    camera.updateProjectionMatrix();
    render();
  }

  // One sample drawn.
  const position = new THREE.Vector3(), rotation = new THREE.Quaternion(), matrix = new THREE.Matrix4();
  function framePose(s, f) {
    const o = (s * frameCount + f) * 7;
    position.set(poses[o], poses[o + 1], poses[o + 2]);
    rotation.set(poses[o + 3], poses[o + 4], poses[o + 5], poses[o + 6]);
  }
  let shown = -1;
  function show(s) {
    shown = s;
    for (const d of drawn) {
      const { body } = d;
      if (d.group) {
        framePose(s, body.first_frame);
        d.group.position.copy(position);
        d.group.quaternion.copy(rotation);
        continue;
      }
      const centre = [];
      const rims = d.chambers.map(() => []);
      for (let j = 0; j < body.frames; j++) {
        framePose(s, body.first_frame + j);
        centre.push(position.clone());
        matrix.makeRotationFromQuaternion(rotation);
        d.chambers.forEach((chamber, k) => {
          const r = body.chambers.radius;
          const offset = new THREE.Vector3(0, r * Math.cos(chamber.angle), r * Math.sin(chamber.angle)).applyMatrix4(matrix);
          rims[k].push(position.clone().add(offset));
        });
      }
      const curve = new THREE.CatmullRomCurve3(centre);
      d.tube.geometry.dispose();
      d.tube.geometry = new THREE.TubeGeometry(curve, 4 * body.frames, body.radius, 16, false);
      d.chambers.forEach((chamber, k) => {
        chamber.mesh.geometry.dispose();
        chamber.mesh.geometry = new THREE.TubeGeometry(new THREE.CatmullRomCurve3(rims[k]), 4 * body.frames, 0.22 * body.chambers.radius + 0.1 * body.radius, 8, false);
      });
      d.tip.position.copy(centre[centre.length - 1]);
    }
    comMarker.position.set(com[3 * s], com[3 * s + 1], com[3 * s + 2]);
    trailGeometry.setDrawRange(0, s + 1);
    const from = offsets[s], to = offsets[s + 1];
    touches.forEach((touch, k) => {
      const visible = from + k < to;
      touch.dot.visible = touch.arrow.visible = visible;
      if (!visible) return;
      const c = (from + k) * 7;
      const at = new THREE.Vector3(contacts[c + 1], contacts[c + 2], contacts[c + 3]);
      const force = new THREE.Vector3(contacts[c + 4], contacts[c + 5], contacts[c + 6]);
      touch.dot.position.copy(at);
      const length = force.length() * forceScale;
      touch.arrow.visible = length > 1e-6 * bodyLength;
      if (touch.arrow.visible) {
        touch.arrow.position.copy(at);
        touch.arrow.setDirection(force.normalize());
        touch.arrow.setLength(length, Math.min(0.3 * length, 0.04 * bodyLength), Math.min(0.15 * length, 0.02 * bodyLength));
      }
    });
    RUN.thrusters.forEach((thruster, k) => {
      const thrust = thrusts[s * RUN.thrusters.length + k];
      const arrow = thrusters[k];
      framePose(s, thruster.frame);
      const direction = new THREE.Vector3(...thruster.direction).applyQuaternion(rotation);
      if (thrust < 0) direction.negate();
      const length = 0.3 * bodyLength * Math.abs(thrust) / largestThrust;
      arrow.visible = length > 1e-6 * bodyLength;
      arrow.position.copy(position);
      arrow.setDirection(direction);
      if (arrow.visible) arrow.setLength(length, 0.3 * length, 0.15 * length);
    });
    scrub.value = String(s);
    timeLabel.textContent = 't = ' + times[s].toFixed(3) + ' s of ' + times[samples - 1].toFixed(2);
    drawCursors();
  }

  // Play, pause, scrub, speed, follow.
  const scrub = document.getElementById('scrub');
  const timeLabel = document.getElementById('time');
  const play = document.getElementById('play');
  const speed = document.getElementById('speed');
  const follow = document.getElementById('follow');
  scrub.max = String(Math.max(samples - 1, 0));
  let playing = !(options.paused || options.t !== undefined || testing);
  follow.checked = Boolean(options.follow);
  let clock = 0;
  function sampleAt(t) {
    let lo = 0, hi = samples - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid] <= t + 1e-6 * (1 + Math.abs(t))) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function moveTo(s) {
    const before = shown >= 0 ? new THREE.Vector3(com[3 * shown], com[3 * shown + 1], com[3 * shown + 2]) : null;
    show(s);
    if (follow.checked && before) {
      const shift = new THREE.Vector3(com[3 * s], com[3 * s + 1], com[3 * s + 2]).sub(before);
      camera.position.add(shift);
      controls.target.add(shift);
      controls.update();
    }
    render();
  }
  function setPlaying(on) {
    playing = on;
    play.textContent = on ? 'Pause' : 'Play';
    last = performance.now();
  }
  play.addEventListener('click', () => {
    if (!playing && shown >= samples - 1) clock = times[0];
    setPlaying(!playing);
  });
  window.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target.tagName !== 'SELECT') { e.preventDefault(); play.click(); }
  });
  scrub.addEventListener('input', () => { setPlaying(false); clock = times[Number(scrub.value)]; moveTo(Number(scrub.value)); });
  let last = performance.now();
  function tick(now) {
    if (playing && samples > 0) {
      clock += (now - last) / 1000 * Number(speed.value);
      if (clock > times[samples - 1]) { clock = times[samples - 1]; setPlaying(false); }
      const s = sampleAt(clock);
      if (s !== shown) moveTo(s);
    }
    last = now;
    requestAnimationFrame(tick);
  }

  // The side panel: chosen series against time, a cursor at the shown sample.
  const select = document.getElementById('series');
  const plots = document.getElementById('plots');
  RUN.series.forEach((series, k) => {
    const option = document.createElement('option');
    option.value = String(k);
    option.textContent = series.name + (series.unit ? ' (' + series.unit + ')' : '');
    option.selected = k < Math.min(2, seriesCount);
    select.appendChild(option);
  });
  let charts = [];
  function buildCharts() {
    plots.innerHTML = '';
    charts = Array.from(select.selectedOptions).slice(0, 6).map((option) => {
      const k = Number(option.value);
      const canvas = document.createElement('canvas');
      canvas.className = 'plot';
      plots.appendChild(canvas);
      canvas.addEventListener('click', (e) => {
        const box = canvas.getBoundingClientRect();
        const t = times[0] + (e.clientX - box.left) / box.width * (times[samples - 1] - times[0]);
        setPlaying(false);
        clock = t;
        moveTo(sampleAt(t));
      });
      return { k, canvas };
    });
    drawCursors();
  }
  function drawCursors() {
    for (const { k, canvas } of charts) {
      const width = canvas.clientWidth, height = canvas.clientHeight;
      if (canvas.width !== width) { canvas.width = width; canvas.height = height; }
      const g = canvas.getContext('2d');
      g.clearRect(0, 0, width, height);
      let lo = Infinity, hi = -Infinity;
      for (let s = 0; s < samples; s++) { const v = values[s * seriesCount + k]; if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }
      if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
      const t0 = times[0], t1 = Math.max(times[samples - 1], t0 + 1e-9);
      const x = (t) => 4 + (t - t0) / (t1 - t0) * (width - 8);
      const y = (v) => height - 16 - (v - lo) / (hi - lo) * (height - 30);
      g.strokeStyle = '#ddd';
      g.strokeRect(0.5, 0.5, width - 1, height - 1);
      g.strokeStyle = '#1f5fa5';
      g.beginPath();
      for (let s = 0; s < samples; s++) {
        const v = values[s * seriesCount + k];
        if (s === 0) g.moveTo(x(times[s]), y(v)); else g.lineTo(x(times[s]), y(v));
      }
      g.stroke();
      if (shown >= 0) {
        g.strokeStyle = '#c0392b';
        g.beginPath();
        g.moveTo(x(times[shown]) + 0.5, 0);
        g.lineTo(x(times[shown]) + 0.5, height);
        g.stroke();
      }
      g.fillStyle = '#333';
      const series = RUN.series[k];
      const now = shown >= 0 ? values[shown * seriesCount + k] : NaN;
      g.fillText(series.name + ' = ' + (Number.isFinite(now) ? now.toPrecision(4) : '-') + ' ' + series.unit + '   [' + lo.toPrecision(3) + ', ' + hi.toPrecision(3) + ']', 6, height - 4);
    }
  }
  select.addEventListener('change', buildCharts);

  function render() { renderer.render(scene, camera); }

  document.getElementById('title').textContent = RUN.title;
  document.title = RUN.title + ' - softgen view';
  document.getElementById('summary').textContent = RUN.summary;
  window.addEventListener('resize', resize);
  buildCharts();
  resize();
  const startAt = options.t !== undefined ? Number(options.t) : times[0];
  clock = startAt;
  moveTo(samples > 0 ? sampleAt(startAt) : 0);
  setPlaying(playing);
  requestAnimationFrame(tick);

  const status = document.getElementById('status');
  status.textContent = JSON.stringify({ errors, sample: shown, time: times[shown], opened_ms: performance.now() - started });
  window.softgenView = { errors, show: moveTo, sampleAt };
})();
