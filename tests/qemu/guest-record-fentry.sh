# Guest script of ctest's qemu_record_layers (busybox sh, inside the VM of run-in-vm.sh, Debian's
# 6.1 kernel): `eziotrace probes` must choose fentry/fexit for the VFS and ext4 layers and find the
# page-cache and block tracepoints, and a recording of the layer workload with every layer (the
# default) must succeed. The counts are checked on the host (record-layers.sh fentry) with
# python3-otf2, from the archive copied out of $EZIO_OUT.
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
eziotrace probes -v > "$EZIO_OUT/probes.txt" 2>&1
cat "$EZIO_OUT/probes.txt"
check "probes: VFS uses fentry/fexit" grep -Eq '^vfs +exact +fentry/fexit vfs_read,vfs_write' "$EZIO_OUT/probes.txt"
check "probes: ext4 uses fentry/fexit" grep -Eq \
  '^fs +exact +ext4: fentry/fexit ext4_file_read_iter,ext4_file_write_iter,ext4_sync_file(;|$)' \
  "$EZIO_OUT/probes.txt"
check "probes: page cache hooks mm_filemap_add_to_page_cache" \
  grep -Eq '^pagecache .*tp_btf/mm_filemap_add_to_page_cache' "$EZIO_OUT/probes.txt"
check "probes: block hooks block_rq_issue and block_rq_complete" \
  grep -Eq '^block .*block_rq_issue,block_rq_complete' "$EZIO_OUT/probes.txt"
mkdir -p "$EZIO_DISK/w"
check "record of the workload with all layers succeeds" \
  eziotrace record -o "$EZIO_OUT/trace" -- ezio_layers_workload "$EZIO_DISK/w"
exit $failed
