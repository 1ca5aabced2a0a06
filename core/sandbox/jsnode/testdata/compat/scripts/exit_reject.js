console.log('start');
Promise.reject(new Error('nobody catches me'));
setTimeout(() => console.log('not reached'), 50);
