/** Types of umask.mjs. */
export declare function tightenUmask(): number | undefined;
export declare function restoreUserUmask(env?: NodeJS.ProcessEnv): void;
