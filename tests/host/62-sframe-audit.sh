#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-audit.so, the LD_AUDIT helper that registers SFrame sections with
# PR_ADD_SFRAME / PR_REMOVE_SFRAME, on the host.
#
# The host kernel has no PR_ADD_SFRAME: prctl-stub (tests/sframe/, a
# seccomp user-notification stand-in) answers the calls instead and logs
# them; the checks compare that log with what the ELF files and
# dlopen-loop's l_addr say: the stub's own ABI table, dlopen and dlclose
# loops, PT_GNU_SFRAME and sidecars, bad sections, a kernel that says
# EINVAL or ENOMEM, 2000 dlopens without growth.  The programs are make
# sframe-tools'; the work files stay in $BUILD_DIR/sframe-tools/audit-test.
set -u

. "$(dirname "$0")/lib.sh"
OUT=$SFRAME_TOOLS
HERE=$REPO/tests/sframe
VEC=${SFRAME_VECTORS:-$REPO/tests/vectors}
A=$OUT/sframe-audit.so
AF=$OUT/sframe-audit-filephdr.so
STUB=$OUT/prctl-stub
LOOP=$OUT/dlopen-loop
CANCEL=$OUT/cancel-loop
LIBC=$(ldd "$OUT/dlopen-loop" | sed -n 's/.*libc\.so\.6 => \(\S*\).*/\1/p')
GEN=$OUT/sframe-gen
T=$OUT/audit-test
TAP_OUT=$T/why
PY=${PYTHON:-python3}
N=50

# stub NAME [STUB-OPTS...] -- CMD...: run CMD under prctl-stub; the stub's
# log is NAME.log, CMD's stdout NAME.out, stderr NAME.err, status NAME.rc
stub() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	timeout 600 "$STUB" -o "$T/$name.log" "${opts[@]}" -- "$@" \
		>"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}

rc_is() {	# NAME WANT
	local rc
	rc=$(cat "$T/$1.rc")
	[ "$rc" = "$2" ] && return 0
	echo "exit status $rc, want $2; stderr:"
	cat "$T/$1.err"
	return 1
}

no_stderr() {
	[ -s "$T/$1.err" ] || return 0
	echo "stderr not empty:"
	cat "$T/$1.err"
	return 1
}

# one_msg NAME PATTERN: stderr is exactly one "sframe-audit: " line, with PATTERN
one_msg() {
	local n
	n=$(wc -l <"$T/$1.err")
	if [ "$n" = 1 ] && grep -q '^sframe-audit: ' "$T/$1.err" &&
	   grep -qF -- "$2" "$T/$1.err"; then
		return 0
	fi
	echo "want one 'sframe-audit:' line with '$2', got $n lines:"
	cat "$T/$1.err"
	return 1
}

count_in_log() {	# NAME REGEX
	grep -cE "$2" "$T/$1.log"
}

log_counts() {	# NAME ADDS REMOVES (any result)
	local a r
	a=$(count_in_log "$1" '^add ')
	r=$(count_in_log "$1" '^remove ')
	[ "$a" = "$2" ] && [ "$r" = "$3" ] && return 0
	echo "adds=$a removes=$r, want $2 and $3"
	cat "$T/$1.log"
	return 1
}

rm -rf "$T"
mkdir -p "$T" || exit 1

# ---- the Python half: ELF edits, SFrame rewriting, log checks ----
cat >"$T/sftool.py" <<'EOF'
import ctypes, os, re, struct, sys
from collections import defaultdict

PT_LOAD, PT_GNU_SFRAME, PF_X = 1, 0x6474e554, 1
PAGE = os.sysconf('SC_PAGE_SIZE')

def phdrs(path):
    d = open(path, 'rb').read()
    off, = struct.unpack_from('<Q', d, 0x20)
    ent, num = struct.unpack_from('<HH', d, 0x36)
    for i in range(num):
        o = off + i * ent
        t, f, fo, va, _, fs, ms, al = struct.unpack_from('<IIQQQQQQ', d, o)
        yield dict(at=o, type=t, flags=f, offset=fo, vaddr=va, filesz=fs,
                   memsz=ms, align=al)

def text_of(path):
    xs = [p for p in phdrs(path) if p['type'] == PT_LOAD and p['flags'] & PF_X]
    assert len(xs) == 1, path
    return xs[0]['vaddr'], xs[0]['vaddr'] + xs[0]['memsz']

def sframe_phdr(path):
    for p in phdrs(path):
        if p['type'] == PT_GNU_SFRAME:
            return p['vaddr'], p['memsz']
    return None

SIDECAR_MAGIC, SIDECAR_HDR = b'SFRMSIDE', 96

def build_id(path):
    """The GNU build ID of an ELF file, from its PT_NOTEs."""
    d = open(path, 'rb').read()
    for p in phdrs(path):
        if p['type'] != 4:
            continue
        o, end = p['offset'], p['offset'] + p['filesz']
        al = 8 if p.get('align') == 8 else 4
        while o + 12 <= end:
            nsz, dsz, typ = struct.unpack_from('<III', d, o)
            name = o + 12
            desc = name + (nsz + al - 1) // al * al
            if typ == 3 and d[name:name + nsz] == b'GNU\0':
                return d[desc:desc + dsz]
            o = desc + (dsz + al - 1) // al * al
    raise SystemExit('no build ID in ' + path)

def sidecar_bytes(sec, obj):
    """The sidecar of section sec for the object obj (its build ID)."""
    bid = build_id(obj)
    hdr = SIDECAR_MAGIC + struct.pack('<IIII', SIDECAR_HDR, 1, len(bid),
                                      len(sec)) + bid
    return hdr + bytes(SIDECAR_HDR - len(hdr)) + bytes(sec)

def section_of(data):
    """The section of a sidecar file (or of a raw section)."""
    return data[SIDECAR_HDR:] if data[:8] == SIDECAR_MAGIC else data

def func_starts(sec, vaddr):
    """Function start vaddrs of a v2/v3 section at vaddr."""
    sec = section_of(sec)
    ver, flags, aux = sec[2], sec[3], sec[7]
    nf, fdoff = struct.unpack_from('<I', sec, 8)[0], struct.unpack_from('<I', sec, 20)[0]
    esz, fmt = (20, '<i') if ver == 2 else (16, '<q')
    out = []
    for i in range(nf):
        o = 28 + aux + fdoff + i * esz
        out.append(vaddr + (o if flags & 4 else 0) +
                   struct.unpack_from(fmt, sec, o)[0])
    return out

def funcs_log(starts, text_vaddr):
    """What prctl-stub logs as funcs= for these starts."""
    s = ','.join('+%#x' % (f - text_vaddr) for f in starts[:32])
    return s + (',...(%d)' % len(starts) if len(starts) > 32 else '')

def pt_funcs(path):
    d = open(path, 'rb').read()
    for p in phdrs(path):
        if p['type'] == PT_GNU_SFRAME:
            return func_starts(d[p['offset']:p['offset'] + p['filesz']],
                               p['vaddr'])

def down(a): return a & ~(PAGE - 1)
def up(a): return (a + PAGE - 1) & ~(PAGE - 1)

def nosframe(src, dst):
    """Copy src with its PT_GNU_SFRAME turned into PT_NULL."""
    d = bytearray(open(src, 'rb').read())
    n = 0
    for p in phdrs(src):
        if p['type'] == PT_GNU_SFRAME:
            struct.pack_into('<I', d, p['at'], 0)
            n += 1
    assert n == 1, 'no PT_GNU_SFRAME in ' + src
    open(dst, 'wb').write(d)
    os.chmod(dst, 0o755)

def section_vaddr(path, name):
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    ent, num, stridx = struct.unpack_from('<HHH', d, 0x3a)
    sh = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * ent)
          for i in range(num)]
    stro = sh[stridx][4]
    for s in sh:
        n = d[stro + s[0]:d.index(b'\0', stro + s[0])].decode()
        if n == name:
            return s[3]
    raise SystemExit('no %s in %s' % (name, path))

def read_funcs(sec, vaddr):
    """(func vaddr, size, FDE attr + FREs) of a v3 section at vaddr."""
    (magic, ver, flags, abi, _, _, aux, nf, nfres, frelen, fdoff,
     froff) = struct.unpack_from('<HBBBbbBIIIII', sec, 0)
    assert magic == 0xdee2 and ver == 3, 'want v3 input'
    h = 28 + aux
    fdes = []
    for i in range(nf):
        o = h + fdoff + i * 16
        start, size, fre = struct.unpack_from('<qII', sec, o)
        func = vaddr + (o if flags & 4 else 0) + start
        fdes.append([func, size, fre])
    order = sorted(range(nf), key=lambda i: fdes[i][2]) + [None]
    for k in range(nf):
        i, j = order[k], order[k + 1]
        end = frelen if j is None else fdes[j][2]
        fdes[i].append(sec[h + froff + fdes[i][2]:h + froff + end])
    return flags, nfres, fdes

def secvaddr(path, name='.sframe'):
    print(hex(section_vaddr(path, name)))

def rebase(raw, vaddr, dst, fmt, shift, obj):
    """A section at vaddr -> a sidecar of obj (as if at vaddr 0), v3 or
    v2; shift moves every function (rules for some other code)."""
    sec = bytearray(open(raw, 'rb').read())
    vaddr, shift = int(vaddr, 0), int(shift, 0)
    flags, nfres, fdes = read_funcs(sec, vaddr)
    if fmt == 'v3':
        h = 28 + sec[7]
        fdoff, = struct.unpack_from('<I', sec, 20)
        for i, f in enumerate(fdes):
            o = h + fdoff + i * 16
            struct.pack_into('<q', sec, o, f[0] + shift - (o if flags & 4 else 0))
        open(dst, 'wb').write(sidecar_bytes(sec, obj))
        return
    pcrel = fmt == 'v2'
    fres = b''
    idx = b''
    for i, (func, size, _, attr) in enumerate(fdes):
        n, info, info2, rep = struct.unpack_from('<HBBB', attr, 0)
        assert info2 & 0x1f == 0 and not info & 0x80, 'not expressible in v2'
        o = 28 + i * 20
        idx += struct.pack('<iIIIBBH', func + shift - (o if pcrel else 0),
                           size, len(fres), n, info & 0x3f, rep, 0)
        fres += attr[5:]
    hdr = struct.pack('<HBBBbbBIIIII', 0xdee2, 2, 1 | (4 if pcrel else 0),
                      3, 0, -8, 0, len(fdes), nfres, len(fres), 0, len(idx))
    open(dst, 'wb').write(sidecar_bytes(hdr + idx + fres, obj))

def samefuncs(raw, vaddr, *sidecars):
    """Do the sidecars (at vaddr 0) name the functions the section does?"""
    want = func_starts(open(raw, 'rb').read(), int(vaddr, 0))
    for s in sidecars:
        got = func_starts(open(s, 'rb').read(), 0)
        if got != want:
            raise SystemExit('%s: %s, want %s' % (s, [hex(f) for f in got],
                                                  [hex(f) for f in want]))

def corrupt(mode, src, dst):
    """A broken copy of the sidecar src."""
    d = bytearray(open(src, 'rb').read())
    h = SIDECAR_HDR
    if mode == 'truncated':
        d = d[:len(d) * 2 // 3]
    elif mode == 'magic':
        d[h:h + 2] = b'\x34\x12'
    elif mode == 'hugefdes':
        struct.pack_into('<I', d, h + 8, 0xffffffff)
    elif mode == 'raw':
        d = d[h:]
    elif mode == 'buildid':
        d[24] ^= 0xff
    elif mode == 'trailing':
        d += b'\0' * 64
        struct.pack_into('<I', d, 20, len(d) - h)
    open(dst, 'wb').write(d)

LOG_ADD = re.compile(r'^add pid=\d+ sframe=(0x[0-9a-f]+|0)-(0x[0-9a-f]+|0) '
                     r'text=(0x[0-9a-f]+|0)-(0x[0-9a-f]+|0) file=(\S+)'
                     r'(?: funcs=(\S+))? -> (\S+)')
LOG_RM = re.compile(r'^remove pid=\d+ sframe=(0x[0-9a-f]+|0) -> (\S+)')
LOG_DROP = re.compile(r'^drop pid=\d+ sframe=(0x[0-9a-f]+|0) ')

def parse_log(path):
    ev, summary = [], None
    for line in open(path):
        m = LOG_ADD.match(line)
        if m:
            ev.append(('add', int(m[1], 16), int(m[2], 16), int(m[3], 16),
                       int(m[4], 16), m[5], m[6], m[7], line.strip()))
            continue
        m = LOG_RM.match(line)
        if m:
            ev.append(('remove', int(m[1], 16), m[2], line.strip()))
            continue
        m = LOG_DROP.match(line)
        if m:
            ev.append(('drop', int(m[1], 16), line.strip()))
        elif line.startswith('summary '):
            summary = dict(kv.split('=') for kv in line.split()[1:])
    return ev, summary

class Tap:
    def __init__(self, prefix):
        self.prefix = prefix
    def __call__(self, name, problems):
        if problems:
            print('not ok - %s: %s' % (self.prefix, name))
            for p in problems[:20]:
                print('    # ' + p)
            if len(problems) > 20:
                print('    # ... %d more' % (len(problems) - 20))
        else:
            print('ok - %s: %s' % (self.prefix, name))

def check_registry(tap, ev, summary, stay=()):
    """At exit the sections of the files in stay (still open) are still
    registered: sframe-audit removes nothing at exit.  Every other one went
    with its text when dlclose unmapped it (the stub's "drop", as the
    kernel does) and was then removed (ENOENT), never before."""
    live, gone, bad = {}, set(), []
    for e in ev:
        if e[0] == 'add' and e[7] == '0':
            if e[1] in live:
                bad.append('added twice: ' + e[8])
            live[e[1]] = e[5]
            gone.discard(e[1])
        elif e[0] == 'drop':
            if e[1] not in live:
                bad.append('dropped, not registered: ' + e[2])
            live.pop(e[1], None)
            gone.add(e[1])
        elif e[0] == 'remove':
            if e[1] in live:
                bad.append('removed while its text is mapped: ' + e[3])
                live.pop(e[1])
            elif e[1] not in gone:
                bad.append('remove without a prior add: ' + e[3])
            elif e[2] != 'ENOENT':
                bad.append('want ENOENT: ' + e[3])
            gone.discard(e[1])
    if gone:
        bad.append('dropped, never removed: ' +
                   ', '.join(hex(a) for a in sorted(gone)))
    want = sorted(os.path.realpath(f) for f in stay)
    if sorted(live.values()) != want:
        bad.append('registered at exit: %s, want %s' %
                   (sorted(live.values()), want))
    if summary is None:
        bad.append('no summary line in the log')
    elif summary['leftovers'] != str(len(want)):
        bad.append('stub summary: %s, want leftovers=%d' %
                   (summary, len(want)))
    tap('removed once unmapped, after the drop; at exit registered: %s' %
        (' '.join(os.path.basename(f) for f in stay) or 'nothing'), bad)

def check_loop(prefix, log, out, want, *specs):
    """specs: PATH=pt or PATH=side:SIDECAR, the libraries that register."""
    tap = Tap(prefix)
    want = int(want)
    libs = {}
    for s in specs:
        path, kind = s.split('=', 1)
        libs[os.path.realpath(path)] = (path, kind)
    opens = defaultdict(list)
    for line in open(out):
        m = re.match(r'^open (\S+) l_addr=(0x[0-9a-f]+|0)$', line)
        if m:
            opens[os.path.realpath(m[1])].append(int(m[2], 16))
    ev, summary = parse_log(log)
    adds = [e for e in ev if e[0] == 'add']
    rms = [e for e in ev if e[0] == 'remove']
    drops = [e for e in ev if e[0] == 'drop']
    bad = ['failed: ' + e[-1] for e in adds if e[-2] != '0']
    if len(adds) != want or len(rms) != want or len(drops) != want:
        bad.insert(0, 'adds=%d drops=%d removes=%d, want %d each' %
                   (len(adds), len(drops), len(rms), want))
    tap('adds == drops == removes == %d, adds succeeded' % want, bad)

    bad, seen = [], defaultdict(int)
    for e in adds:
        _, ss, se, ts, te, f, fl, _, line = e
        if f not in libs:
            bad.append('add for a library that has no SFrame: ' + line)
            continue
        k = seen[f]
        seen[f] += 1
        if k >= len(opens[f]):
            bad.append('more adds than dlopens: ' + line)
            continue
        bias = opens[f][k]
        x0, x1 = text_of(f)
        if (ts, te) != (down(bias + x0), up(bias + x1)):
            bad.append('text %#x-%#x, want %#x-%#x: %s' %
                       (ts, te, down(bias + x0), up(bias + x1), line))
        kind = libs[f][1]
        if kind == 'pt':
            sv, sm = sframe_phdr(f)
            starts = pt_funcs(f)
            if (ss, se) != (bias + sv, bias + sv + sm):
                bad.append('sframe %#x-%#x, want %#x-%#x: %s' %
                           (ss, se, bias + sv, bias + sv + sm, line))
        else:
            side = section_of(open(kind.split(':', 1)[1], 'rb').read())
            starts = func_starts(side, 0)
            if se - ss != len(side):
                bad.append('sframe size %#x, sidecar has %#x: %s' %
                           (se - ss, len(side), line))
        want = funcs_log(starts, down(x0))
        if fl != want:
            bad.append('funcs=%s, want %s: %s' % (fl, want, line))
    for f in libs:
        if seen[f] != len(opens[f]):
            bad.append('%s: %d adds for %d dlopens' %
                       (f, seen[f], len(opens[f])))
    tap('each add: text = r-x mapping of its library; section and function starts right', bad)
    check_registry(tap, ev, summary)

def check_pt(prefix, log, *files):
    """Each of files (PT_GNU_SFRAME objects) added once, nothing else;
    the bias is the one its sframe address implies."""
    tap = Tap(prefix)
    ev, summary = parse_log(log)
    adds = [e for e in ev if e[0] == 'add']
    want = {os.path.realpath(f) for f in files}
    bad = []
    got = sorted(e[5] for e in adds)
    if got != sorted(want):
        bad.append('added %s, want %s' % (got, sorted(want)))
    for _, ss, se, ts, te, f, fl, r, line in adds:
        if r != '0':
            bad.append('failed: ' + line)
        if f not in want:
            continue
        sv, sm = sframe_phdr(f)
        bias = ss - sv
        x0, x1 = text_of(f)
        if bias % PAGE or se - ss != sm or \
           (ts, te) != (down(bias + x0), up(bias + x1)):
            bad.append('want text %#x-%#x: %s' %
                       (down(bias + x0), up(bias + x1), line))
        if fl != funcs_log(pt_funcs(f), down(x0)):
            bad.append('funcs=%s, want %s: %s' %
                       (fl, funcs_log(pt_funcs(f), down(x0)), line))
    tap('adds exactly %s, text = r-x mapping' %
        ' and '.join(os.path.basename(f) for f in files), bad)
    check_registry(tap, ev, summary, files)

def leak(out, rss_slack_kb, vm_slack_kb=None):
    """dlopen-loop's maps lines equal warm and end, RssAnon (and VmSize)
    within a slack."""
    vals = {}
    for line in open(out):
        m = re.match(r'^(maps|rss_kb|vm_kb) warm=(-?\d+) end=(-?\d+)$', line)
        if m:
            vals[m[1]] = (int(m[2]), int(m[3]))
    if 'maps' not in vals or 'rss_kb' not in vals or 'vm_kb' not in vals:
        raise SystemExit('no maps/rss_kb/vm_kb lines in ' + out)
    print('maps warm=%d end=%d, rss_kb warm=%d end=%d, vm_kb warm=%d end=%d' %
          (vals['maps'] + vals['rss_kb'] + vals['vm_kb']))
    mw, me = vals['maps']
    rw, re_ = vals['rss_kb']
    vw, ve = vals['vm_kb']
    if mw != me or re_ - rw > int(rss_slack_kb):
        raise SystemExit('grew')
    if vm_slack_kb is not None and ve - vw > int(vm_slack_kb):
        raise SystemExit('address space grew')

# ---- run under prctl-stub: the stub's answers against the ABI ----
def abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall.argtypes = [ctypes.c_long] * 6
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    R, W, X, PRIV_ANON = 1, 2, 4, 0x22

    def prctl(op, a=0, b=0, c=0, d=0):
        if libc.syscall(157, op, a, b, c, d) == 0:
            return 'OK'
        return {22: 'EINVAL', 14: 'EFAULT', 17: 'EEXIST', 2: 'ENOENT',
                12: 'ENOMEM'}.get(ctypes.get_errno(), str(ctypes.get_errno()))

    def mmap(n, prot):
        return libc.mmap(None, n * PAGE, prot, PRIV_ANON, -1, 0)

    def section(at, func, magic=0xdee2):
        """A v3 section at address at: one FDE, func+16, CFA sp+8."""
        hdr = struct.pack('<HBBBbbBIIIII', magic, 3, 5, 3, 0, -8, 0,
                          1, 1, 8, 0, 16)
        fde = struct.pack('<qII', func - (at + 28), 16, 0)
        body = hdr + fde + struct.pack('<HBBB', 1, 0, 0, 0) + b'\x00\x03\x08'
        ctypes.memmove(at, body, len(body))
        return at, at + len(body)

    text = mmap(2, R | X)
    data = mmap(2, R | W)
    none = mmap(1, 0)
    s1 = section(data, text)
    s2 = section(data + 256, text + PAGE)
    bad = section(data + 512, text, magic=0x1234)
    out = section(data + 768, text + 3 * PAGE)
    t = (text, text + 2 * PAGE)
    cases = [
        ('add', (79, *s1, *t), 'OK'),
        ('add again: same text', (79, *s1, *t), 'EEXIST'),
        ('add overlapping text', (79, *s2, text + PAGE, text + 2 * PAGE), 'EEXIST'),
        ('remove with non-zero unused args', (80, s1[0], 1), 'EINVAL'),
        ('remove', (80, s1[0]), 'OK'),
        ('remove again', (80, s1[0]), 'ENOENT'),
        ('remove never added', (80, data + 4), 'ENOENT'),
        ('add empty sframe range', (79, s1[0], s1[0], *t), 'EINVAL'),
        ('add inverted text range', (79, *s1, t[1], t[0]), 'EINVAL'),
        ('add text not executable', (79, *s1, data, data + PAGE), 'EINVAL'),
        ('add text partly unmapped', (79, *s1, text, text + 3 * PAGE), 'EINVAL'),
        ('add sframe range not readable', (79, none, none + 64, *t), 'EFAULT'),
        ('add bad magic', (79, *bad, *t), 'EINVAL'),
        ('add FDE outside the text', (79, *out, *t), 'EINVAL'),
        ('add again after the errors', (79, *s1, *t), 'OK'),
        ('remove it', (80, s1[0]), 'OK'),
    ]
    for name, args, want in cases:
        got = prctl(*args)
        print('%s - stub ABI: %s -> %s' %
              ('ok' if got == want else 'not ok', name, want))
        if got != want:
            print('    # got ' + got)

if __name__ == '__main__':
    globals()[sys.argv[1].replace('-', '_')](*sys.argv[2:])
EOF
tool() {
	"$PY" "$T/sftool.py" "$@"
}

echo "# sframe-audit host test, OUT=$OUT"

# ---- 1. what is needed ----
missing=
for f in "$A" "$AF" "$STUB" "$LOOP" "$CANCEL" "$OUT/libloop-a.so" \
	 "$OUT/libloop-b.so" "$OUT/libloop-c.so" "$GEN" "$LIBC" \
	 "$VEC/libvec.so" "$VEC/vec_plt"; do
	[ -e "$f" ] || missing="$missing $f"
done
if [ -n "$missing" ] || ! command -v "$PY" >/dev/null ||
   ! command -v objcopy >/dev/null; then
	echo "missing:$missing (or python3, objcopy)" >"$T/why"
	not_ok "build and fixtures present" "@$T/why"
	echo "1 checks: 0 passed, 1 failed"
	exit 1
fi
ok "build and fixtures present"

# ---- 2. fixtures: libvec.so as is, without PT_GNU_SFRAME + a sidecar ----
mkdir -p "$T/pt" "$T/side" "$T/sc" "$T/v2" "$T/v2abs" "$T/rp" "$T/link"
cp "$VEC/libvec.so" "$T/pt/libvec.so"
SIDE=$T/side/libvec-side.so
fixtures() {
	local sv
	objcopy -O binary --only-section=.sframe "$VEC/libvec.so" \
		"$T/libvec.raw" || return 1
	cmp "$T/libvec.raw" "$VEC/libvec.so.sframe.bin" || return 1
	tool nosframe "$VEC/libvec.so" "$T/side/libvec-side.so" || return 1
	if readelf -lW "$T/side/libvec-side.so" | grep -q GNU_SFRAME; then
		echo "PT_GNU_SFRAME still in the copy"
		return 1
	fi
	sv=$(tool secvaddr "$VEC/libvec.so") || return 1
	tool rebase "$T/libvec.raw" "$sv" "$T/sc/libvec-side.so.sframe" v3 0 "$SIDE" &&
	tool rebase "$T/libvec.raw" "$sv" "$T/v2/libvec-side.so.sframe" v2 0 "$SIDE" &&
	tool rebase "$T/libvec.raw" "$sv" "$T/v2abs/libvec-side.so.sframe" v2abs 0 "$SIDE" &&
	tool rebase "$T/libvec.raw" "$sv" "$T/libvec-shifted.sframe" v3 0x100000 "$SIDE" &&
	tool samefuncs "$T/libvec.raw" "$sv" "$T/sc/libvec-side.so.sframe" \
		"$T/v2/libvec-side.so.sframe" "$T/v2abs/libvec-side.so.sframe"
}
check "fixtures: libvec's .sframe extracted, rebased to vaddr 0 (v3, v2, v2 section-relative); copy without PT_GNU_SFRAME" fixtures

SIDE=$T/side/libvec-side.so
PTLIB=$T/pt/libvec.so
SC_SPEC="$SIDE=side:$T/sc/libvec-side.so.sframe"

# ---- 3. the stub itself ----
timeout 60 "$STUB" -- true >"$T/probe.out" 2>&1
stub_rc=$?
if [ "$stub_rc" = 2 ]; then
	have_stub=false
	skip "prctl-stub: seccomp user notification" \
		"$(head -n 1 "$T/probe.out")"
else
	have_stub=true
	check "prctl-stub: runs a program (status $stub_rc)" \
		test "$stub_rc" = 0
	timeout 120 "$STUB" -o "$T/abi.log" -- "$PY" "$T/sftool.py" abi \
		>"$T/abi.out" 2>&1
	echo $? >"$T/abi.rc"
	tap_count "prctl-stub ABI cases" cat "$T/abi.out"
	check "prctl-stub: all 16 ABI cases ran" \
		sh -c "[ \$(cat '$T/abi.rc') = 0 ] &&
		       [ \$(grep -c '^ok - stub ABI' '$T/abi.out') = 16 ] ||
		       { cat '$T/abi.out'; exit 1; }"
	timeout 60 "$STUB" -- sh -c 'exit 3' 2>/dev/null
	check "prctl-stub: exits with the program's status" test $? = 3
fi

stub_tests() {
# ---- 4. the main loop: PT_GNU_SFRAME, sidecar, and two without SFrame ----
stub loop -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	"$LOOP" "$N" "$PTLIB" "$SIDE" "$OUT/libloop-a.so" "$OUT/libloop-b.so"
check "loop: exit status 0" rc_is loop 0
check "loop: no stderr (libloop-a/b, libc: no SFrame, skipped silently)" \
	no_stderr loop
tap_count "check-loop loop" tool check-loop loop "$T/loop.log" "$T/loop.out" $((2 * N + 2)) \
	"$PTLIB=pt" "$SC_SPEC"

# the same with program headers from the file, and the debug log
stub filephdr -- env LD_AUDIT="$AF" SFRAME_SIDECAR_DIR="$T/sc" \
	SFRAME_AUDIT_DEBUG=1 "$LOOP" 5 "$PTLIB" "$SIDE" "$OUT/libloop-a.so"
check "loop, phdrs from the file: exit status 0" rc_is filephdr 0
tap_count "check-loop loop, phdrs from the file" tool check-loop "loop, phdrs from the file" "$T/filephdr.log" \
	"$T/filephdr.out" 12 "$PTLIB=pt" "$SC_SPEC"
debug_log() {
	local a r
	grep -q "libvec.so: program headers from the file" "$T/filephdr.err" ||
		{ echo "no 'program headers from the file'"; return 1; }
	a=$(grep -c '^sframe-audit: add ' "$T/filephdr.err")
	r=$(grep -c '^sframe-audit: remove ' "$T/filephdr.err")
	grep -q "^sframe-audit: skip .*libloop-a.so: no PT_GNU_SFRAME, no sidecar" \
		"$T/filephdr.err" || { echo "no skip line for libloop-a"; return 1; }
	[ "$a" = 12 ] && [ "$r" = 12 ] ||
		{ echo "debug: $a adds, $r removes, want 12"; return 1; }
}
check "SFRAME_AUDIT_DEBUG=1: logs every add, remove and skip" debug_log

# ---- 5. vec_plt: libvec.so (DT_NEEDED) at start-up, nothing else ----
stub plt -- env LD_AUDIT="$A" "$VEC/vec_plt" 10
check "vec_plt: exit status 0" rc_is plt 0
check "vec_plt: no stderr" no_stderr plt
tap_count "check-pt vec_plt" tool check-pt vec_plt "$T/plt.log" "$VEC/libvec.so"
stub pltdbg -- env LD_AUDIT="$A" SFRAME_AUDIT_DEBUG=1 "$VEC/vec_plt" 10
check "vec_plt: libc.so.6 (no .sframe) looked at and skipped silently" \
	grep -q 'skip .*/libc.so.6: no PT_GNU_SFRAME, no sidecar' "$T/pltdbg.err"
check "vec_plt: main program and ld.so left to the kernel, vDSO skipped" \
	sh -c "grep -q 'skip \"\": main program' '$T/pltdbg.err' &&
	       grep -q 'skip .*ld-linux.*: interpreter' '$T/pltdbg.err' &&
	       grep -q 'skip linux-vdso.so.1: vDSO' '$T/pltdbg.err'"

# "ld.so PROG": the kernel registered ld.so, not PROG: PROG is added
LDSO=$(readelf -lW "$VEC/vec_plt" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
stub ldso -- env LD_AUDIT="$A" "$LDSO" "$VEC/vec_plt" 10
check "ld.so vec_plt: exit status 0, no stderr" \
	sh -c "[ \$(cat '$T/ldso.rc') = 0 ] && [ ! -s '$T/ldso.err' ]"
tap_count "check-pt ld.so vec_plt" tool check-pt "ld.so vec_plt" "$T/ldso.log" "$VEC/vec_plt" "$VEC/libvec.so"

# ---- 6. other sidecars ----
for v in v2 v2abs; do
	stub "$v" -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/$v" \
		"$LOOP" 5 "$SIDE"
	check "sidecar $v: exit status 0, no stderr" \
		sh -c "[ \$(cat '$T/$v.rc') = 0 ] && [ ! -s '$T/$v.err' ]"
	tap_count "check-loop sidecar $v" tool check-loop "sidecar $v" "$T/$v.log" "$T/$v.out" 5 \
		"$SIDE=side:$T/$v/libvec-side.so.sframe"
done

# next to the object's realpath, without SFRAME_SIDECAR_DIR
cp "$SIDE" "$T/rp/libvec-rp.so"
cp "$T/sc/libvec-side.so.sframe" "$T/rp/libvec-rp.so.sframe"
ln -sf "$T/rp/libvec-rp.so" "$T/link/libvec-link.so"
stub rp -- env -u SFRAME_SIDECAR_DIR LD_AUDIT="$A" "$LOOP" 3 \
	"$T/link/libvec-link.so"
check "sidecar at realpath.sframe (opened through a symlink): status 0, no stderr" \
	sh -c "[ \$(cat '$T/rp.rc') = 0 ] && [ ! -s '$T/rp.err' ]"
tap_count "check-loop sidecar at realpath" tool check-loop "sidecar at realpath" "$T/rp.log" "$T/rp.out" 3 \
	"$T/link/libvec-link.so=side:$T/rp/libvec-rp.so.sframe"

# ---- 7. bad sidecars: one message naming the file, no add ----
# (with SFRAME_AUDIT_WARN=1; without it, nothing on stderr)
#  truncated, magic, hugefdes: a broken file or section header;
#  shifted: functions outside the object's text; raw: a bare section,
#  which names no object; buildid: another build ID; trailing: bytes
#  after the section; other: sframe-gen's sidecar of libloop-a.so.
for bad in truncated magic hugefdes shifted raw buildid trailing other; do
	mkdir -p "$T/bad-$bad"
	case $bad in
	shifted) cp "$T/libvec-shifted.sframe" "$T/bad-$bad/libvec-side.so.sframe" ;;
	other) "$GEN" -o "$T/bad-$bad/libvec-side.so.sframe" "$OUT/libloop-a.so" ;;
	*) tool corrupt $bad "$T/sc/libvec-side.so.sframe" \
		"$T/bad-$bad/libvec-side.so.sframe" ;;
	esac
	stub "bad-$bad" -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/bad-$bad" \
		SFRAME_AUDIT_WARN=1 "$LOOP" 3 "$SIDE" "$PTLIB"
	bad_sidecar() {
		rc_is "bad-$1" 0 &&
		one_msg "bad-$1" "$T/bad-$1/libvec-side.so.sframe" &&
		case $1 in
		buildid|other) one_msg "bad-$1" "is of another object (build ID" ;;
		raw) one_msg "bad-$1" "not a sidecar" ;;
		trailing) one_msg "bad-$1" "its SFrame header accounts for" ;;
		*) true ;;
		esac &&
		tool check-loop "bad-$1" "$T/bad-$1.log" "$T/bad-$1.out" 4 \
			"$PTLIB=pt" >"$T/bad.tap" &&
		! grep -q '^not ok' "$T/bad.tap" || { cat "$T/bad.tap"; return 1; }
	}
	check "bad sidecar ($bad): one message naming it, no add for it, program fine" \
		bad_sidecar $bad
	sed 's/^/    # /' "$T/bad-$bad.err"
done
stub bad-quiet -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/bad-other" \
	"$LOOP" 3 "$SIDE" "$PTLIB"
check "bad sidecar without SFRAME_AUDIT_WARN: status 0, nothing on stderr" \
	sh -c "[ \$(cat '$T/bad-quiet.rc') = 0 ] && [ ! -s '$T/bad-quiet.err' ]"

# binutils 2.40 (as --gsframe) makes v1 sections, with PT_GNU_SFRAME
v1_lib() {
	mkdir -p "$T/v1" &&
	${CC:-cc} -O2 -fomit-frame-pointer -fPIC -shared -Wa,--gsframe \
		-o "$T/v1/libloop-v1.so" "$HERE/libloop-a.c" &&
	readelf -lW "$T/v1/libloop-v1.so" | grep -q GNU_SFRAME
}
if ! v1_lib >"$T/why" 2>&1; then
	skip "PT_GNU_SFRAME with SFrame v1" "cannot build one: $(head -n 1 "$T/why")"
else
	stub v1 -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/v1" \
		SFRAME_AUDIT_WARN=1 "$LOOP" 3 \
		"$T/v1/libloop-v1.so" "$PTLIB"
	v1_check() {
		rc_is v1 0 && one_msg v1 "PT_GNU_SFRAME: offset 2: SFrame version 1" &&
		tool check-loop v1 "$T/v1.log" "$T/v1.out" 4 "$PTLIB=pt" \
			>"$T/v1.tap" &&
		! grep -q '^not ok' "$T/v1.tap" || { cat "$T/v1.tap"; return 1; }
	}
	check "PT_GNU_SFRAME with SFrame v1 (binutils 2.40), no sidecar: one message, no add" \
		v1_check
	sed 's/^/    # /' "$T/v1.err"
fi

# ---- 8. errors from the kernel ----
stub einval -e EINVAL -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	SFRAME_AUDIT_WARN=1 "$LOOP" 5 "$PTLIB" "$SIDE"
check "EINVAL for everything: exit status 0" rc_is einval 0
check "EINVAL for everything: one 'no PR_ADD_SFRAME support' message" \
	one_msg einval "kernel has no PR_ADD_SFRAME support"
check "EINVAL for everything: one add tried, then no more (one probe remove)" \
	log_counts einval 1 1
check "EINVAL for everything: the loop ran" \
	test "$(grep -c '^open ' "$T/einval.out")" = 12

stub enomem -e ENOMEM -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	SFRAME_AUDIT_WARN=1 "$LOOP" 5 "$PTLIB" "$SIDE"
check "ENOMEM for everything: exit status 0" rc_is enomem 0
check "ENOMEM for everything: one message" \
	one_msg enomem "PR_ADD_SFRAME sframe="
check "ENOMEM for everything: every object tried, nothing to remove" \
	log_counts enomem 12 0

# ---- 9. 2000 dlopens: no mapping or memory growth ----
stub leak -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	"$LOOP" -q 2000 "$PTLIB" "$SIDE"
check "2000 dlopens: exit status 0, no stderr" \
	sh -c "[ \$(cat '$T/leak.rc') = 0 ] && [ ! -s '$T/leak.err' ]"
check "2000 dlopens: adds == removes == 4002, adds succeeded, removes after the drop" \
	sh -c "[ \$(grep -c '^add .* -> 0\$' '$T/leak.log') = 4002 ] &&
	       [ \$(grep -c '^remove .* -> ENOENT\$' '$T/leak.log') = 4002 ] &&
	       grep -q 'leftovers=0' '$T/leak.log'"
check "2000 dlopens: /proc/self/maps lines equal, anonymous RSS within 64 kB" \
	tool leak "$T/leak.out" 64
sed 's/^/    # /' "$T/why"

# ---- 9b. 1000 dlmopen() namespaces: no growth ----
# The loader sends no LA_ACT_CONSISTENT when a namespace becomes empty;
# the entries of its objects are reaped when the next namespace maps
# objects where they were (or at the next LA_ACT_CONSISTENT).
mkdir -p "$T/ns"
"$GEN" -o "$T/ns/libloop-c.so.sframe" "$OUT/libloop-c.so" &&
"$GEN" -o "$T/ns/libc.so.6.sframe" "$LIBC" ||
	not_ok "sframe-gen sidecars of libloop-c.so and libc"
stub ns -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/ns" \
	"$LOOP" -q -m 1000 "$OUT/libloop-c.so"
check "1000 dlmopen namespaces: exit status 0, no stderr" \
	sh -c "[ \$(cat '$T/ns.rc') = 0 ] && [ ! -s '$T/ns.err' ]"
ns_counts() {
	local adds ok
	adds=$(grep -c '^add .*/libloop-c\.so .*-> 0$' "$T/ns.log")
	ok=$(grep -c '^add .*/libc\.so\.6 .*-> 0$' "$T/ns.log")
	[ "$adds" = 1000 ] && [ "$ok" = 1002 ] &&
	grep -Eq 'leftovers=[2-4]$' "$T/ns.log" && return 0
	echo "want 1000 libloop-c and 1002 libc adds, 2-4 left at exit:"
	grep -c '^add' "$T/ns.log"
	grep summary "$T/ns.log"
	return 1
}
check "1000 dlmopen namespaces: each namespace's libloop-c and libc added, all but the last reaped" \
	ns_counts
check "1000 dlmopen namespaces: /proc/self/maps lines equal, anonymous RSS within 64 kB" \
	tool leak "$T/ns.out" 64
sed 's/^/    # /' "$T/why"

# ---- 9b'. a dlmopen() namespace's text mapped by something else ----
# After each dlclose the program keeps a 1.9 MB allocation, which mmap()
# may put where the namespace's libc was: the closed entries are reaped
# all the same (their text is not their file's any more).  RssAnon
# grows by the 4 kB touched of each allocation.
stub nsmap -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/ns" \
	"$LOOP" -q -m -a 1900 50 "$OUT/libloop-c.so"
nsmap() {
	local adds removes left
	rc_is nsmap 0 && no_stderr nsmap || return 1
	adds=$(grep -c '^add .* -> 0$' "$T/nsmap.log")
	removes=$(grep -c '^remove ' "$T/nsmap.log")
	left=$(sed -n 's/.*leftovers=\([0-9]*\)$/\1/p' "$T/nsmap.log")
	[ "$adds" = 102 ] && [ $((adds - removes - left)) -le 2 ] &&
		tool leak "$T/nsmap.out" 400 && return 0
	echo "adds=$adds removes=$removes leftovers=$left: want every namespace's reaped but the last"
	return 1
}
check "50 dlmopen namespaces, big allocations after each close: entries reaped, maps lines equal" nsmap
sed 's/^/    # /' "$T/why"

# ---- 9b''. one thread per dlopen(): no arena or cache per thread ----
# The module runs on a libc of its own: a malloc() in a callback would
# leave an arena (64 MiB of address space) and a cache per thread.
stub threads -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	"$LOOP" -q -t 2000 "$SIDE"
check "2000 threads, one dlopen each: status 0, maps lines equal, RSS within 64 kB, VmSize within 1 MB" \
	sh -c "[ \$(cat '$T/threads.rc') = 0 ] && [ ! -s '$T/threads.err' ] &&
	       python3 '$T/sftool.py' leak '$T/threads.out' 64 1024"
sed 's/^/    # /' "$T/why"

# ---- 9b'''. no build ID: the .eh_frame hash, computed from memory ----
# sframe-gen hashes the file's PT_LOADs and .eh_frame, the module the
# same where the loader mapped them: they must agree.
mkdir -p "$T/nobid"
${CC:-cc} -O2 -fPIC -shared -Wl,--build-id=none -o "$T/nobid/libloop-nobid.so" \
	"$HERE/libloop-c.c" &&
"$GEN" -o "$T/nobid/libloop-nobid.so.sframe" "$T/nobid/libloop-nobid.so" ||
	not_ok "a library without build ID and its sidecar"
stub nobid -- env -u SFRAME_SIDECAR_DIR LD_AUDIT="$A" SFRAME_AUDIT_WARN=1 \
	"$LOOP" 3 "$T/nobid/libloop-nobid.so"
check "no build ID: the sidecar (.eh_frame hash) is taken, 3 adds, no message" \
	sh -c "[ \$(cat '$T/nobid.rc') = 0 ] && [ ! -s '$T/nobid.err' ] &&
	       [ \$(grep -c '^add .*libloop-nobid.so .*-> 0\$' '$T/nobid.log') = 3 ] ||
	       { cat '$T/nobid.err' '$T/nobid.log'; exit 1; }"

# ---- 9c. threads cancelled inside dlopen()/dlclose() ----
# open(), pread(), msync() are cancellation points: cancelled inside the
# module's callbacks, a thread would unwind with the loader's lock held
# and the next dlopen() would block for ever.
stub cancel -- timeout 60 env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" \
	"$CANCEL" 200 "$SIDE"
check "200 threads cancelled in dlopen/dlclose loops: all joined, dlopen works after (60 s timeout)" \
	sh -c "[ \$(cat '$T/cancel.rc') = 0 ] && grep -qx '200 cycles' '$T/cancel.out' ||
	       { echo status \$(cat '$T/cancel.rc'); cat '$T/cancel.err'; exit 1; }"
check "cancel loop: sections added and reaped while threads were cancelled" \
	sh -c "[ \$(grep -c '^add .*-> 0\$' '$T/cancel.log') -ge 200 ]"

# ---- 9d. a sidecar path that is no regular file ----
# A FIFO would block open() for ever (the program hangs at start-up), a
# device may act on open: neither is opened.
mkdir -p "$T/fifo" "$T/dev" "$T/fifo-rp"
mkfifo "$T/fifo/libvec-side.so.sframe"
ln -sf /dev/zero "$T/dev/libvec-side.so.sframe"
cp "$SIDE" "$T/fifo-rp/libvec-fifo.so"
mkfifo "$T/fifo-rp/libvec-fifo.so.sframe"
for k in fifo dev fifo-rp; do
	if [ $k = fifo-rp ]; then
		stub "$k" -- timeout 20 env -u SFRAME_SIDECAR_DIR LD_AUDIT="$A" \
			SFRAME_AUDIT_WARN=1 "$LOOP" 3 "$T/fifo-rp/libvec-fifo.so" "$PTLIB"
	else
		stub "$k" -- timeout 20 env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/$k" \
			SFRAME_AUDIT_WARN=1 "$LOOP" 3 "$SIDE" "$PTLIB"
	fi
	check "sidecar is a $k: exit status 0 at once (20 s timeout), one 'not a regular file' message" \
		sh -c "[ \$(cat '$T/$k.rc') = 0 ] &&
		       [ \$(wc -l < '$T/$k.err') = 1 ] &&
		       grep -q 'sframe: not a regular file\$' '$T/$k.err' ||
		       { echo status \$(cat '$T/$k.rc'); cat '$T/$k.err'; exit 1; }"
done

# ---- 9e. the loader's program headers, no unusual system call ----
check "program headers come from dlinfo(RTLD_DI_PHDR), not the file" \
	sh -c "! grep -q 'program headers from the file' '$T/pltdbg.err' &&
	       ! grep -q 'no program headers from dlinfo' '$T/pltdbg.err'"
check "the module imports no process_vm_readv (sandboxes kill for it)" \
	sh -c "! nm -D --undefined-only '$A' | grep -w process_vm_readv"

# ---- 9f. exit while other threads dlopen(): _dl_fini's unlocked la_objclose ----
exit_race() {
	local i
	for i in $(seq 50); do
		timeout 20 "$STUB" -o "$T/race.log" -- env LD_AUDIT="$A" \
			SFRAME_SIDECAR_DIR="$T/ns" "$CANCEL" -x 4 "$OUT/libloop-c.so" \
			>"$T/race.out" 2>"$T/race.err" ||
			{ echo "run $i: status $?"; cat "$T/race.err"; return 1; }
	done
}
check "50 exits with 4 threads in dlopen and dlmopen loops: every run status 0" exit_race
}

if $have_stub; then
	stub_tests
else
	skip "all prctl-stub based checks" "seccomp user notification unavailable"
fi

# ---- 10. the host kernel itself (no PR_ADD_SFRAME: EINVAL) ----
host_kernel() {
	env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" SFRAME_AUDIT_WARN=1 \
		"$LOOP" 5 "$PTLIB" "$SIDE" >"$T/host.out" 2>"$T/host.err"
	echo $? >"$T/host.rc"
	rc_is host 0 && one_msg host "kernel has no PR_ADD_SFRAME support" &&
	test "$(grep -c '^open ' "$T/host.out")" = 12 || return 1
	env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/sc" "$LOOP" 5 "$PTLIB" \
		"$SIDE" >"$T/hostq.out" 2>"$T/hostq.err"
	echo $? >"$T/hostq.rc"
	rc_is hostq 0 && no_stderr hostq
}
# Does this kernel lack the interface (EINVAL to removing an unknown address)?
if "$PY" -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(157, 80, 4096, 0, 0, 0)
sys.exit(0 if r == -1 and ctypes.get_errno() == 22 else 1)
'; then
	check "host kernel (EINVAL): one message with SFRAME_AUDIT_WARN=1, none without; program works" host_kernel
else
	skip "host kernel: one message, program works" \
		"this kernel implements PR_REMOVE_SFRAME"
fi

# ---- 11. sframe-gen sidecars and injected sections, if it is built ----
gen_tests() {
	local v opts
	mkdir -p "$T/gen-v3" "$T/gen-v2" "$T/gen-v2abs" "$T/gen-inj"
	for v in v3 v2 v2abs; do
		case $v in
		v3) opts= ;;
		v2) opts="-V 2" ;;
		v2abs) opts="-V 2 --no-pcrel" ;;
		esac
		for l in a b; do
			# shellcheck disable=SC2086
			"$GEN" $opts -o "$T/gen-$v/libloop-$l.so.sframe" \
				"$OUT/libloop-$l.so" >"$T/why" 2>&1 ||
				{ not_ok "sframe-gen $opts libloop-$l.so" "@$T/why"
				  return; }
		done
		stub "gen-$v" -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/gen-$v" \
			"$LOOP" 10 "$OUT/libloop-a.so" "$OUT/libloop-b.so"
		check "sframe-gen $v sidecars: exit status 0, no stderr" \
			sh -c "[ \$(cat '$T/gen-$v.rc') = 0 ] && [ ! -s '$T/gen-$v.err' ]"
		tap_count "check-loop sframe-gen $v sidecars" tool check-loop "sframe-gen $v sidecars" "$T/gen-$v.log" \
			"$T/gen-$v.out" 22 \
			"$OUT/libloop-a.so=side:$T/gen-$v/libloop-a.so.sframe" \
			"$OUT/libloop-b.so=side:$T/gen-$v/libloop-b.so.sframe"
	done
	if [ -e "$T/v1/libloop-v1.so" ]; then
		mkdir -p "$T/gen-v1"
		"$GEN" -o "$T/gen-v1/libloop-v1.so.sframe" "$T/v1/libloop-v1.so" \
			>"$T/why" 2>&1 || { not_ok "sframe-gen libloop-v1.so" "@$T/why"
					    return; }
		stub gen-v1 -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/gen-v1" \
			"$LOOP" 3 "$T/v1/libloop-v1.so"
		check "v1 PT_GNU_SFRAME + sframe-gen sidecar: the sidecar is used, no message" \
			sh -c "[ \$(cat '$T/gen-v1.rc') = 0 ] && [ ! -s '$T/gen-v1.err' ]"
		tap_count "check-loop v1 PT_GNU_SFRAME + sidecar" tool check-loop "v1 PT_GNU_SFRAME + sidecar" "$T/gen-v1.log" \
			"$T/gen-v1.out" 3 \
			"$T/v1/libloop-v1.so=side:$T/gen-v1/libloop-v1.so.sframe"
	fi
	"$GEN" -i -o "$T/gen-inj/libloop-a.so" "$OUT/libloop-a.so" \
		>"$T/why" 2>&1 || { not_ok "sframe-gen -i libloop-a.so" "@$T/why"
				    return; }
	stub gen-inj -- env LD_AUDIT="$A" "$LOOP" 10 "$T/gen-inj/libloop-a.so" \
		"$OUT/libloop-b.so"
	check "sframe-gen -i (PT_GNU_SFRAME): exit status 0, no stderr" \
		sh -c "[ \$(cat '$T/gen-inj.rc') = 0 ] && [ ! -s '$T/gen-inj.err' ]"
	tap_count "check-loop sframe-gen -i" tool check-loop "sframe-gen -i" "$T/gen-inj.log" "$T/gen-inj.out" 11 \
		"$T/gen-inj/libloop-a.so=pt"

	# A libc sidecar: the program's libc and the audit module's own copy
	# (its namespace, which ld.so never reports) are both added, the
	# module's first, and neither is removed at exit.
	local libc
	libc=$(ldd "$VEC/vec_plt" | sed -n 's/.*libc\.so\.6 => \(\S*\).*/\1/p')
	mkdir -p "$T/gen-own"
	"$GEN" -o "$T/gen-own/libc.so.6.sframe" "$libc" >"$T/why" 2>&1 ||
		{ not_ok "sframe-gen $libc" "@$T/why"; return; }
	stub own -- env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/gen-own" \
		"$VEC/vec_plt" 10
	own_ns() {
		local adds
		rc_is own 0 && no_stderr own || return 1
		adds=$(grep '^add .*/libc\.so\.6 .*-> 0$' "$T/own.log" |
		       sed 's/.* sframe=\([^ ]*\) .*/\1/' | sort -u | wc -l)
		[ "$adds" = 2 ] &&
		grep '^add ' "$T/own.log" | head -n 1 | grep -q '/libc\.so\.6 ' &&
		! grep -q '^remove ' "$T/own.log" &&
		grep -q 'leftovers=3$' "$T/own.log" && return 0
		echo "want 2 libc adds (audit namespace first), no remove, 3 left at exit:"
		cat "$T/own.log"
		return 1
	}
	check "libc sidecar: the audit module's own libc and the program's added, kept at exit" \
		own_ns
}
# ---- 12. real programs: their output is theirs ----
# stdout, stderr and exit status of each command (run by sh -c, which is
# audited too) are the same with the module as without: on the host
# kernel (no PR_ADD_SFRAME) and, if there is one, under prctl-stub with a
# libc sidecar (registrations happen).
REAL=(
	"git --version"
	"python3 -c 'import zlib, sqlite3; print(zlib.crc32(b\"sframe\"), sqlite3.sqlite_version)'"
	"perl -MPOSIX -e 'print floor(2.5), qq(\\n)'"
	"ls /nonexistent-sframe-dir"
	"echo out; echo err >&2; exit 3"
	"gcc --version"
	"printf 'int main(void){return 7;}' | gcc -x c -o $T/real-a.out - && $T/real-a.out"
	"awk 'BEGIN { print 6 * 7 }'"
	"sort -r /etc/os-release"
	"readelf -h /bin/true"
	"objdump -f /bin/true"
	"tar --version"
	"make --version"
	"gzip -c /etc/os-release | gzip -dc | sha256sum"
	"openssl version"
	"find /usr/share/doc/libc6 -maxdepth 1 -name copyright"
	"date -u -d @0"
	"bash -c 'type ls; ulimit -n'"
)
real_programs() {
	local mode=$1 cmd n=0 i=0 have
	for cmd in "${REAL[@]}"; do
		i=$((i + 1))
		have=${cmd%% *}
		case $have in echo|printf) have=sh ;; esac
		command -v "$have" >/dev/null || continue
		n=$((n + 1))
		sh -c "$cmd" >"$T/real.o0" 2>"$T/real.e0" </dev/null
		echo "status $?" >>"$T/real.o0"
		if [ "$mode" = stub ]; then
			timeout 120 "$STUB" -o "$T/real.log" -- env LD_AUDIT="$A" \
				SFRAME_SIDECAR_DIR="$T/ns" sh -c "$cmd" \
				>"$T/real.o1" 2>"$T/real.e1" </dev/null
		else
			env LD_AUDIT="$A" SFRAME_SIDECAR_DIR="$T/ns" sh -c "$cmd" \
				>"$T/real.o1" 2>"$T/real.e1" </dev/null
		fi
		echo "status $?" >>"$T/real.o1"
		if ! cmp -s "$T/real.o0" "$T/real.o1" ||
		   ! cmp -s "$T/real.e0" "$T/real.e1"; then
			echo "$cmd: output differs with the module:"
			diff "$T/real.o0" "$T/real.o1"
			diff "$T/real.e0" "$T/real.e1"
			return 1
		fi
	done
	[ "$n" -ge 12 ] || { echo "only $n of ${#REAL[@]} programs here"; return 1; }
	echo "$n programs"
}
check "real programs on the host kernel: stdout, stderr and status as without the module" \
	real_programs host
sed 's/^/    # /' "$T/why"
if $have_stub; then
	check "real programs under prctl-stub, libc sidecar: stdout, stderr and status as without" \
		real_programs stub
	sed 's/^/    # /' "$T/why"
	check "real programs under prctl-stub: libc was registered" \
		grep -q '^add .*/libc\.so\.6 .*-> 0$' "$T/real.log"
fi

if [ ! -x "$GEN" ]; then
	skip "sframe-gen sidecars for libloop-a/b" "$GEN not built"
elif ! $have_stub; then
	skip "sframe-gen sidecars for libloop-a/b" "no prctl-stub"
else
	gen_tests
fi
