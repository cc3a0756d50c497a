# oxmpi: `make` builds a usable tree in build/ (bin, include, lib),
# `make test` runs every test, `make demo` runs an MPI program at 4 ranks,
# `make install PREFIX=/opt/oxmpi` copies the tree (relocatable).

PREFIX ?= /usr/local
BUILD  := $(CURDIR)/build
CARGO  ?= cargo
SONAME := libmpi.so.12
PYTHON ?= python3
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: bench all build test cargo-test abi-test c-tests demo install clean setup coverage

all: build

build:
	$(CARGO) build --release
	mkdir -p $(BUILD)/bin $(BUILD)/lib/pkgconfig $(BUILD)/include
	cp target/release/libmpi.so $(BUILD)/lib/$(SONAME).0.0
	ln -sf $(SONAME).0.0 $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME).0.0 $(BUILD)/lib/libmpi.so
	# libmpich.so.12: only a dependency on libmpi.so.12 (DESIGN.md §1)
	echo '' | cc -x c -shared -fPIC -o $(BUILD)/lib/libmpich.so.12 - \
		-Wl,-soname,libmpich.so.12 -Wl,--no-as-needed -L$(BUILD)/lib -lmpi -Wl,-rpath,'$$ORIGIN'
	ln -sf libmpich.so.12 $(BUILD)/lib/libmpich.so
	# the mpi module (use mpi): gfortran's mpi.mod beside mpif.h, for
	# mpif90 (its object, mpif.h's common blocks, is not linked); the
	# module it uses for MPI_SIZEOF, the only code, goes into libmpifort
	mkdir -p $(BUILD)/obj
	rm -f $(BUILD)/obj/mpi_sizeof.o
	if command -v gfortran >/dev/null 2>&1; then \
		gfortran -c -O2 -fPIC -J $(BUILD)/include -o $(BUILD)/obj/mpi_sizeof.o fortran-shim/mpi_sizeof.f90 \
		&& gfortran -c -Iinclude -J $(BUILD)/include -o $(BUILD)/obj/mpi_module.o fortran-shim/mpi_module.f90; \
	else echo "gfortran not found: no mpi module (use mpi) built"; fi
	# libmpifort.so.12: the mpif.h bindings over libmpi; libmpichfort.so.12
	# (Debian MPICH's Fortran name): only a dependency on it
	cc -O2 -Wall -Werror -shared -fPIC -Iinclude -o $(BUILD)/lib/libmpifort.so.12.0.0 fortran-shim/*.c \
		$$(ls $(BUILD)/obj/mpi_sizeof.o 2>/dev/null) \
		-Wl,-soname,libmpifort.so.12 -Wl,--no-undefined -L$(BUILD)/lib -lmpi -Wl,-rpath,'$$ORIGIN'
	ln -sf libmpifort.so.12.0.0 $(BUILD)/lib/libmpifort.so.12
	ln -sf libmpifort.so.12.0.0 $(BUILD)/lib/libmpifort.so
	echo '' | cc -x c -shared -fPIC -o $(BUILD)/lib/libmpichfort.so.12 - \
		-Wl,-soname,libmpichfort.so.12 -Wl,--no-as-needed -L$(BUILD)/lib -lmpifort -Wl,-rpath,'$$ORIGIN'
	ln -sf libmpichfort.so.12 $(BUILD)/lib/libmpichfort.so
	cp target/release/mpiexec target/release/mpicc target/release/oxmpi-info $(BUILD)/bin/
	ln -sf mpiexec $(BUILD)/bin/mpirun
	ln -sf mpicc $(BUILD)/bin/mpicxx
	ln -sf mpicc $(BUILD)/bin/mpic++
	for f in mpif77 mpif90 mpifort; do ln -sf mpicc $(BUILD)/bin/$$f; done
	cp include/mpi.h include/mpio.h include/mpif.h $(BUILD)/include/
	sed 's/@VERSION@/$(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)/' tools/oxmpi.pc.in > $(BUILD)/lib/pkgconfig/oxmpi.pc
	ln -sf oxmpi.pc $(BUILD)/lib/pkgconfig/mpi.pc

install: build
	mkdir -p $(PREFIX)
	cp -a $(BUILD)/bin $(BUILD)/include $(BUILD)/lib $(PREFIX)/

# Debian packages the tests and benchmarks need (MPICH for the ABI and
# library-swap tests); run once on a new machine, as root.
setup:
	$(PYTHON) -c 'import pympistandard' 2>/dev/null || $(PYTHON) -m pip install --quiet pympistandard
	if ! command -v mpicc.mpich >/dev/null 2>&1 || [ ! -f /usr/include/x86_64-linux-gnu/mpich/mpi.h ]; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq mpich libmpich-dev; fi
	# gfortran for the Fortran (mpif.h) tests and mpif77
	if ! command -v gfortran >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq gfortran; fi
	# ip (network namespaces as hosts) and pgrep for the launcher tests
	if ! command -v ip >/dev/null 2>&1 || ! command -v pgrep >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq iproute2 procps; fi

demo: build
	$(BUILD)/bin/mpicc -O2 -o $(BUILD)/ring examples/ring.c
	$(BUILD)/bin/mpiexec -n 4 $(BUILD)/ring

test: setup build cargo-test abi-test c-tests

cargo-test:
	$(CARGO) test --release

abi-test:
	$(PYTHON) tools/abi_check.py
	$(PYTHON) tools/gen_prototypes.py --check
	$(PYTHON) tools/gen_fortran.py $(BUILD)/lib/$(SONAME) --check
	$(PYTHON) tools/check_exports.py $(BUILD)/lib/$(SONAME)
	$(PYTHON) tools/check_signatures.py $(BUILD)/lib/$(SONAME)
	$(BUILD)/bin/oxmpi-info --markdown | while IFS= read -r l; do grep -qxF -- "$$l" docs/tunables.md || \
		{ echo "docs/tunables.md lacks: $$l (copy it from oxmpi-info --markdown)"; exit 1; }; done
	$(PYTHON) tools/coverage.py $(BUILD)/lib/$(SONAME) | diff -q - docs/coverage.md >/dev/null || \
		{ echo "docs/coverage.md is stale: run make coverage"; exit 1; }

c-tests: build
	$(PYTHON) tools/run_c_tests.py --build $(BUILD)
	# the same programs with type signatures checked: no false alarm
	$(PYTHON) tools/run_c_tests.py --build $(BUILD) --no-mpich --env OXMPI_CHECK_TYPES=1 \
		type_sendrecv sendrecv_types sendrecv_long coll_basic persistent probe send_modes
	# every test again with the ranks joined by TCP instead of shared memory
	$(PYTHON) tools/run_c_tests.py --build $(BUILD) --no-mpich --env OXMPI_TRANSPORT=tcp
	$(PYTHON) tools/test_launcher.py $(BUILD)
	# jobs on two hosts (network namespaces), strangers, launch by Hydra
	$(PYTHON) tools/test_hosts.py $(BUILD)
	# the NAS-style kernels at class S verify at 1, 2 and 4 ranks
	$(PYTHON) tools/bench_nas.py --check

coverage: build
	$(PYTHON) tools/coverage.py $(BUILD)/lib/$(SONAME) > docs/coverage.md

# Side by side with Debian's MPICH and Open MPI; writes docs/benchmarks.md.
bench: setup build
	if ! command -v mpicc.openmpi >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq openmpi-bin libopenmpi-dev; fi
	$(PYTHON) tools/bench.py --rounds 5
	$(PYTHON) tools/bench_nas.py --rounds 3
	$(PYTHON) tools/bench_overlap.py --rounds 5
	$(PYTHON) tools/bench_nbc.py --rounds 5
	$(PYTHON) tools/bench_mid.py --rounds 3

clean:
	$(CARGO) clean
	rm -rf $(BUILD) c-tests/bin c-tests/bench/bin c-tests/bench/nas/bin
