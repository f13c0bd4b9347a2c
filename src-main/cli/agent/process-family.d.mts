/** Types of process-family.mjs (plain JavaScript: see its header). */
import type { Readable } from 'node:stream';

export const POLL_MS: number;

export interface ProcEntry {
  pid: number;
  /** R, S, D, Z (zombie), … */
  state: string;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot: with the pid, it names one process for good. */
  startTicks: string;
}

/** An environment variable every process of a family inherits: its exact value, or a prefix of it. */
export type FamilyMarker = { variable: string; value: string; prefix?: undefined } | { variable: string; prefix: string; value?: undefined };

export interface FamilySpec {
  /** Process groups whose members (and their descendants) belong to the family. */
  groups?: readonly number[];
  marker?: FamilyMarker;
  /** Pids never part of it (the caller's own process always is left out). */
  exclude?: readonly number[];
}

export function readProcStat(pid: number): ProcEntry | undefined;
export function listProcesses(): ProcEntry[] | undefined;
export function environValue(pid: number, variable: string): string | undefined;
export function running(p: ProcEntry | undefined): p is ProcEntry;
export function groupAlive(pgid: number): boolean;
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean;
export function familyOf(spec: FamilySpec, all?: ProcEntry[] | undefined): ProcEntry[] | undefined;
export function endFamily(spec: FamilySpec & { killAfterMs: number; giveUpMs?: number; groupsSignalled?: boolean }): Promise<'gone' | 'terminated' | 'killed'>;
export function onPipeClosed(stream: Readable | NodeJS.ReadableStream, fn: () => void): void;
