/**
 * Small filesystems for the storage scenarios (needs root; every mount is undone by the caller's
 * `finally`): a tmpfs of a few MB (disk full), and an ext4 image on a loop device that can be made
 * to fail mid-run (`remount,abort`: the kernel's own "errors=remount-ro" path).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './server';

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Why mounts cannot be used here, or undefined when they can. */
export function mountUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (mount needs CAP_SYS_ADMIN)';
  const probe = tempDir('probe');
  try {
    run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
    run('umount', [probe]);
    return undefined;
  } catch (e) {
    return `mount failed: ${(e as Error).message.split('\n')[0]}`;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

export interface Mount {
  dir: string;
  /** Undo everything (idempotent). */
  cleanup(): void;
}

export function mountTmpfs(sizeMb: number): Mount {
  const dir = tempDir('tmpfs');
  run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir]);
  let done = false;
  return {
    dir,
    cleanup() {
      if (done) return;
      done = true;
      try {
        run('umount', [dir]);
      } catch {
        run('umount', ['-l', dir]);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the filesystem holding `dir` until ENOSPC; returns the filler's path and size. */
export function fillDisk(dir: string): { file: string; bytes: number } {
  const file = path.join(dir, 'filler.bin');
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  try {
    for (const size of [1 << 20, 64 << 10, 4096, 512]) {
      const b = Buffer.alloc(size, 0xa5);
      for (;;) {
        try {
          bytes += fs.writeSync(fd, b);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw e;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { file, bytes };
}

export interface LoopMount extends Mount {
  device: string;
  image: string;
  /** The filesystem goes read-only now, with files open for writing (ext4 emergency_ro). */
  abort(): void;
  /** Unmount, e2fsck -fy, mount read-write again (the server must be stopped first). */
  repair(): string;
}

export function loopUnavailable(): string | undefined {
  const why = mountUnavailable();
  if (why) return why;
  for (const bin of ['losetup', 'mkfs.ext4', 'e2fsck']) {
    try {
      run('sh', ['-c', `command -v ${bin}`]);
    } catch {
      return `${bin} not installed`;
    }
  }
  if (!fs.existsSync('/dev/loop-control')) return 'no /dev/loop-control';
  return undefined;
}

export function mountExt4Loop(sizeMb: number): LoopMount {
  const base = tempDir('loop');
  const image = path.join(base, 'disk.img');
  const dir = path.join(base, 'mnt');
  fs.mkdirSync(dir);
  fs.closeSync(fs.openSync(image, 'w'));
  fs.truncateSync(image, sizeMb << 20);
  run('mkfs.ext4', ['-q', '-F', image]);
  const device = run('losetup', ['-f', '--show', image]).trim();
  const mount = () => run('mount', ['-t', 'ext4', '-o', 'errors=remount-ro', device, dir]);
  try {
    mount();
  } catch (e) {
    run('losetup', ['-d', device]);
    throw e;
  }
  let mounted = true;
  let done = false;
  const umount = () => {
    if (!mounted) return;
    try {
      run('umount', [dir]);
    } catch {
      run('umount', ['-l', dir]);
    }
    mounted = false;
  };
  return {
    dir,
    device,
    image,
    abort() {
      run('mount', ['-o', 'remount,abort', dir]);
    },
    repair() {
      umount();
      let report: string;
      try {
        report = run('e2fsck', ['-fy', device]);
      } catch (e) {
        // Exit 1 = "errors corrected": expected after an abort. Anything above 2 is a real failure.
        const status = (e as { status?: number }).status ?? 99;
        report = String((e as { stdout?: string }).stdout ?? '');
        if (status > 2) throw new Error(`e2fsck failed (${status}): ${report}`, { cause: e });
      }
      mount();
      mounted = true;
      return report;
    },
    cleanup() {
      if (done) return;
      done = true;
      try {
        umount();
      } finally {
        try {
          run('losetup', ['-d', device]);
        } finally {
          fs.rmSync(base, { recursive: true, force: true });
        }
      }
    },
  };
}
