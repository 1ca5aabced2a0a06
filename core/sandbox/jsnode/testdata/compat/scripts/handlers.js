// process.on('uncaughtException') and ('unhandledRejection') keep the
// script alive.
process.on('uncaughtException', (e, origin) => console.log('caught', e.message, origin));
process.on('unhandledRejection', (r) => console.log('rejection', r.message));
setTimeout(() => { throw new Error('from timer'); }, 1);
setTimeout(() => { Promise.reject(new Error('from promise')); }, 10);
setTimeout(() => console.log('still running'), 20);
