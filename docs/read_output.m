function r = read_output (file)
  % READ_OUTPUT  Read an rtstap result file into labelled arrays (GNU Octave 7).
  %
  %   addpath ('docs'); r = read_output ('result.h5');
  %   y = r.output_iq;          % .data (complex single), .dims {'beam','doppler','range'},
  %                             % .coords.beam (u), .coords.doppler (Hz), .units, .scales
  %   [~, b] = min (abs (y.coords.beam - 0.0625));
  %   map = squeeze (y.data(b, :, :));      % Doppler x range of that beam
  %   r.detections              % columns beam, doppler_bin, range_cell, power, snr_db, statistic, threshold (cpi),
  %                             % and doppler, range, beam_coord in the axes' units
  %   r.config.threads, r.config.device, r.attrs.schema, r.axes.doppler_hz, ...
  %
  % Arrays keep the file's axis order (row-major C order is reordered, so y.data(b, d, k) is
  % element [b][d][k]); axes are named by the HDF5 dimension labels and take their
  % coordinates from the attached dimension scales (/axes/...; README "File format",
  % schema v1.1). Files without labels or scales (schema v1) read too: axes dim_1, dim_2, ...
  %
  % Why h5dump: Octave 7 (Debian 12) has no h5read/h5readatt, and its `load -hdf5` reads
  % a compound {r, i} as zeros (it takes only members named real and imag), reads no
  % attributes, and stops at variable-length strings. The command-line dumper of HDF5
  % (Debian: hdf5-tools) writes each dataset's bytes (-b FILE) and prints the attributes;
  % this reads those.
  if (nargin != 1 || ! ischar (file))
    print_usage ();
  endif
  if (! exist (file, "file"))
    error ("read_output: %s: no such file", file);
  endif
  list = h5dump (file, "-n 1");
  have = @(name) ! isempty (regexp (list, ["\\n\\s*dataset\\s+" regexptranslate("escape", name) "\\s*\\n"], "once"));
  r = struct ();
  r.attrs = struct ();
  for a = {"schema", "rtstap_version", "commit"}
    out = h5dump (file, ["-a /" a{1}], true);
    if (! isempty (out))
      v = parse_attrs (out);
      if (isfield (v, a{1}))
        r.attrs.(a{1}) = v.(a{1});
      endif
    endif
  endfor
  for g = {"config", "timing", "radar"}
    out = h5dump (file, ["-A -g /" g{1}], true);
    r.(g{1}) = parse_attrs (out);
  endfor
  r.axes = struct ();
  names = regexp (list, "dataset\\s+/axes/(\\w+)", "tokens");
  for k = 1:numel (names)
    r.axes.(names{k}{1}) = read_dataset (file, ["/axes/" names{k}{1}]);
  endfor
  for name = {"/weights", "/output/iq", "/steering", "/timing/cpi_ms"}
    if (have (name{1}))
      r.(strrep (name{1}(2:end), "/", "_")) = labelled (file, name{1});
    endif
  endfor
  if (have ("/detections"))
    r.detections = read_table (file, "/detections");
    % the detections in the axes' units, through /output/iq's scales or /axes
    for c = {{"doppler", "doppler_bin", "doppler"}, {"range", "range_cell", "range"}, ...
             {"beam", "beam", "beam_coord"}}
      dim = c{1}{1}; col = c{1}{2}; to = c{1}{3};
      values = [];
      if (isfield (r, "output_iq") && isfield (r.output_iq.coords, dim))
        values = r.output_iq.coords.(dim);
      else
        f = fieldnames (r.axes);
        f = f(strncmp (f, dim, numel (dim)));
        if (! isempty (f))
          values = r.axes.(f{1});
        endif
      endif
      if (! isempty (values))
        r.detections.(to) = values(double (r.detections.(col)) + 1);
      endif
    endfor
  endif
endfunction

function out = h5dump (file, args, may_fail)
  [st, out] = system (sprintf ("h5dump -w 0 %s %s 2>&1", args, quote (file)));
  if (st != 0)
    if (nargin > 2 && may_fail)
      out = "";
      return;
    endif
    error ("read_output: h5dump %s %s failed (is hdf5-tools installed?): %s", args, file, out);
  endif
endfunction

function q = quote (s)
  q = ["'" strrep(s, "'", "'\\''") "'"];
endfunction

% The attributes in h5dump's text: numbers as doubles, strings as char (several: cellstr).
function s = parse_attrs (text)
  s = struct ();
  parts = strsplit (text, "ATTRIBUTE \"");
  for k = 2:numel (parts)
    p = parts{k};
    name = p(1:index (p, "\"") - 1);
    data = regexp (p, "DATA \\{\\s*\\n(.*?)\\n\\s*\\}", "tokens", "once");
    if (isempty (data) || ! isvarname (name))
      continue;
    endif
    data = data{1};
    if (! isempty (strfind (p, "H5T_STRING")))
      v = regexp (data, "\"((?:[^\"\\\\]|\\\\.)*)\"", "tokens");
      v = cellfun (@(t) t{1}, v, "UniformOutput", false);
      if (numel (v) == 1)
        v = v{1};
      endif
    elseif (! isempty (strfind (p, "H5T_REFERENCE")))
      % DIMENSION_LIST: one entry per axis, "()" or "(DATASET n "/axes/...")"
      e = regexp (data, "\\(((?:DATASET \\d+ \"[^\"]*\")?)\\)", "tokens");
      v = cellfun (@(t) regexprep (t{1}, "^DATASET \\d+ \"(.*)\"$", "$1"), e, "UniformOutput", false);
    else
      v = str2num (["[" regexprep(data, "\\(\\d+(,\\d+)*\\):", "") "]"]);
    endif
    s.(name) = v;
  endfor
endfunction

% The dataset's shape and element type from its header.
function [dims, types, names] = header (file, name)
  h = h5dump (file, ["-H -d " quote(name)]);
  % the dataset's own type and space come first; its attributes (with theirs) follow
  at = regexp (h, "\\n\\s*ATTRIBUTE ", "once");
  if (! isempty (at))
    h = h(1:at);
  endif
  sp = regexp (h, "DATASPACE\\s+SIMPLE \\{ \\(([^)]*)\\)", "tokens", "once");
  if (isempty (sp))
    dims = 1;   % scalar
  else
    dims = str2num (["[" sp{1} "]"]);
  endif
  if (! isempty (strfind (h, "H5T_COMPOUND")))
    m = regexp (h, "(H5T_\\w+)\\s+\"(\\w+)\";", "tokens");
    types = cellfun (@(t) t{1}, m, "UniformOutput", false);
    names = cellfun (@(t) t{2}, m, "UniformOutput", false);
  else
    t = regexp (h, "DATATYPE\\s+(H5T_\\w+)", "tokens", "once");
    types = t; names = {};
  endif
endfunction

function [prec, bytes] = precision (t)
  map = {"H5T_IEEE_F32LE", "single", 4; "H5T_IEEE_F64LE", "double", 8;
         "H5T_STD_I8LE", "int8", 1; "H5T_STD_I16LE", "int16", 2; "H5T_STD_I32LE", "int32", 4;
         "H5T_STD_I64LE", "int64", 8; "H5T_STD_U8LE", "uint8", 1; "H5T_STD_U16LE", "uint16", 2;
         "H5T_STD_U32LE", "uint32", 4; "H5T_STD_U64LE", "uint64", 8};
  k = find (strcmp (map(:, 1), t));
  if (isempty (k))
    error ("read_output: element type %s is not read here (rtstap writes little-endian)", t);
  endif
  prec = map{k, 2}; bytes = map{k, 3};
endfunction

% The dataset's bytes as h5dump writes them in the file's own type (-b FILE).
function raw = dataset_bytes (file, name)
  tmp = [tempname() ".bin"];
  h5dump (file, ["-d " quote(name) " -b FILE -o " quote(tmp)]);
  fid = fopen (tmp, "r");
  raw = fread (fid, Inf, "uint8=>uint8");
  fclose (fid);
  delete (tmp);
endfunction

% C order (last index fastest) into an Octave array indexed in the same axis order.
function x = c_order (v, dims)
  if (numel (dims) == 1)
    x = v(:);
  else
    x = permute (reshape (v, fliplr (dims)), numel (dims):-1:1);
  endif
endfunction

% A numeric or complex ({r, i}) dataset.
function x = read_dataset (file, name)
  [dims, types, names] = header (file, name);
  raw = dataset_bytes (file, name);
  if (isempty (names))
    prec = precision (types{1});
    v = typecast (raw, prec);
  elseif (numel (names) == 2 && all (strcmp (names, {"r", "i"})))
    prec = precision (types{1});
    v = typecast (raw, prec);
    v = complex (v(1:2:end), v(2:2:end));
  else
    error ("read_output: %s is a table; read_table reads it", name);
  endif
  if (! isa (v, "single"))
    v = double (v);   % float64 and integer axes as double; complex64 stays single
  endif
  x = c_order (v, dims);
endfunction

% A compound table (packed, as rtstap writes it): a struct of columns.
function t = read_table (file, name)
  [dims, types, names] = header (file, name);
  raw = dataset_bytes (file, name);
  width = 0;
  for k = 1:numel (types)
    [~, b] = precision (types{k});
    width += b;
  endfor
  n = numel (raw) / width;
  rows = reshape (raw, width, n);
  t = struct ();
  at = 0;
  for k = 1:numel (types)
    [prec, b] = precision (types{k});
    t.(names{k}) = typecast (reshape (rows(at + 1:at + b, :), [], 1), prec);
    at += b;
  endfor
endfunction

% A dataset with its axis labels, scales and units.
function y = labelled (file, name)
  y.data = read_dataset (file, name);
  a = parse_attrs (h5dump (file, ["-A -d " quote(name)]));
  rank = numel (header (file, name));
  y.dims = arrayfun (@(k) sprintf ("dim_%d", k), 1:rank, "UniformOutput", false);
  if (isfield (a, "DIMENSION_LABELS"))
    labels = a.DIMENSION_LABELS;
    if (ischar (labels))
      labels = {labels};
    endif
    for k = 1:min (rank, numel (labels))
      if (! isempty (labels{k}))
        y.dims{k} = labels{k};
      endif
    endfor
  endif
  y.coords = struct ();
  y.scales = struct ();
  if (isfield (a, "DIMENSION_LIST"))
    for k = 1:min (rank, numel (a.DIMENSION_LIST))
      scale = a.DIMENSION_LIST{k};
      if (! isempty (scale))
        y.coords.(y.dims{k}) = read_dataset (file, scale);
        y.scales.(y.dims{k}) = scale;
      endif
    endfor
  endif
  y.units = "";
  if (isfield (a, "units"))
    y.units = a.units;
  endif
endfunction
